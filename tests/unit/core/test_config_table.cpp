#include <gtest/gtest.h>

#include <string>

#include "newscls/core/config_table.h"
#include "newscls/core/error.h"

namespace newscls {
namespace {

struct Inner {
  int depth{};
};

struct Sample {
  int n{};
  std::string mode;
  Inner inner;
  bool legacy{};
};

const ConfigTable<Sample>& table() {
  static const ConfigTable<Sample> t(
      "sample", {
                    {ConfigKey::integer("n", 3, 1, 9, "a count"), field(&Sample::n)},
                    {ConfigKey::choice("mode", "fast", {"fast", "slow"}, "how").optional(), field(&Sample::mode)},
                    {ConfigKey::integer("depth", 2, 0, 5, "nested").optional(), field(&Sample::inner, &Inner::depth)},
                    {ConfigKey::boolean("legacy", false, "new default").absent_reads(true), field(&Sample::legacy)},
                });
  return t;
}

std::string error_of(const nlohmann::json& config) {
  try {
    table().parse(config);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ConfigTable, AbsentKeysAreRefusedOrReadAsTheKeySays) {
  EXPECT_EQ(error_of(nlohmann::json::object()), "config key 'n': missing");
  const Sample s = table().parse({{"n", 4}});
  EXPECT_EQ(s.n, 4);
  EXPECT_EQ(s.mode, "fast");
  EXPECT_EQ(s.inner.depth, 2);
  EXPECT_TRUE(s.legacy);  // what configs written before the key meant, not the default
  EXPECT_FALSE(table().parse(table().defaults()).legacy);
}

TEST(ConfigTable, BadValuesAndUnknownKeysNameTheKey) {
  EXPECT_EQ(error_of({{"n", 10}}), "config key 'n': 10 is out of range 1..9");
  EXPECT_EQ(error_of({{"n", 1}, {"mode", "warp"}}), "config key 'mode': must be \"fast\" or \"slow\", got \"warp\"");
  EXPECT_NE(error_of({{"n", 1}, {"nn", 1}}).find("config key 'nn': unknown key for sample"), std::string::npos);
  EXPECT_EQ(error_of({{"n", 1}, {"_note", "docs are ignored"}}), "");
}

TEST(ConfigTable, DocumentedConfigKeepsTheTablesOrderWithAcceptedValues) {
  const nlohmann::ordered_json doc = table().documented();
  EXPECT_EQ(doc.dump(), R"({"_doc":{"_":"sample defaults, written by scripts/gen_configs.sh from the family's config )"
                        R"(table; keys starting with _ are ignored","n":"a count [1..9]","mode":"how [\"fast\" or )"
                        R"(\"slow\"]","depth":"nested [0..5]","legacy":"new default"},"n":3,"mode":"fast",)"
                        R"("depth":2,"legacy":false})");
  EXPECT_EQ(table().to_json(table().parse(table().defaults())), table().defaults());
}

}  // namespace
}  // namespace newscls
