#include <gtest/gtest.h>

#include <filesystem>

#include "newscls/core/atomic_file.h"
#include "newscls/core/config.h"
#include "newscls/core/error.h"
#include "newscls/workflow/registry.h"
#include "test_support.h"

namespace newscls {
namespace {

nlohmann::json sample() { return {{"n_trees", 100}, {"lr", 0.5}, {"loss", "softmax"}, {"quantize", false}}; }

// Distributed ranks compare these parts and name those that differ.
TEST(Config, FingerprintPartsNameEachSettingAndChangeOnlyWithIt) {
  const nlohmann::json a = {{"config", {{"lr", 0.001}, {"layers", 2}}}, {"seed", 5}};
  nlohmann::json b = a;
  b["config"]["lr"] = 0.002;
  const SettingsFingerprint pa = fingerprint_parts(a), pb = fingerprint_parts(b);
  ASSERT_EQ(pa.size(), 3u);
  EXPECT_EQ(pa[0].first, "config.layers");
  EXPECT_EQ(pa[1].first, "config.lr");
  EXPECT_EQ(pa[2].first, "seed");
  EXPECT_EQ(pa[0].second, pb[0].second);
  EXPECT_NE(pa[1].second, pb[1].second);
  EXPECT_EQ(pa[2].second, pb[2].second);
  EXPECT_GE(pa[1].second, 0);  // 60 bits: a non-negative int64 on every rank
}

TEST(Config, SetOverridesParseTypedValues) {
  nlohmann::json c = sample();
  apply_override(c, "n_trees=10");
  apply_override(c, "lr=0.25");
  apply_override(c, "loss=ova");
  apply_override(c, "quantize=true");
  EXPECT_EQ(config_int(c, "n_trees", 1, 1000), 10);
  EXPECT_DOUBLE_EQ(config_double(c, "lr", 0, 10), 0.25);
  EXPECT_EQ(config_string(c, "loss"), "ova");
  EXPECT_TRUE(config_bool(c, "quantize"));
}

TEST(Config, UnknownKeyWrongTypeAndRangeNameTheKey) {
  nlohmann::json c = sample();
  try {
    apply_override(c, "n_tress=10");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'n_tress'"), std::string::npos);
  }
  EXPECT_THROW(apply_override(c, "n_trees=many"), ConfigError);
  EXPECT_THROW(apply_override(c, "novalue"), UsageError);
  EXPECT_THROW(apply_override(c, "_n_trees=10"), ConfigError);  // a doc key is no setting
  c["n_trees"] = 0;
  EXPECT_THROW(config_int(c, "n_trees", 1, 1000), ConfigError);
  c["n_trees"] = 2.5;
  EXPECT_THROW(config_int(c, "n_trees", 1, 1000), ConfigError);
}

TEST(Config, FileMergeIgnoresDocKeys) {
  nlohmann::json c = sample();
  const std::string path =
      testing::write_text(testing::scratch_dir() + "/c.json", R"({"_doc": {"n_trees": "trees"}, "n_trees": 7})");
  merge_config_file(c, path);
  EXPECT_EQ(c["n_trees"], 7);
  EXPECT_THROW(merge_config_file(c, testing::write_text(testing::scratch_dir() + "/bad.json", "{")), IoError);
}

template <typename F>
std::string io_error_of(F f) {
  try {
    f();
  } catch (const IoError& e) {
    return e.what();
  }
  return "(no IoError)";
}

// A key given twice, or a file that is no object, is named as the file's fault, not taken
// silently (the last value) or blamed on a config key named after the file.
TEST(Config, FileWithARepeatedKeyOrNoObjectIsRefused) {
  nlohmann::json c = sample();
  const std::string twice =
      testing::write_text(testing::scratch_dir() + "/twice.json", R"({"n_trees": 7, "n_trees": 8})");
  EXPECT_NE(io_error_of([&] { merge_config_file(c, twice); }).find("key 'n_trees' appears twice"), std::string::npos);
  const std::string nested = testing::write_text(testing::scratch_dir() + "/nested.json",
                                                 R"({"_doc": {"a": 1}, "_more": {"a": 2}, "n_trees": 9})");
  merge_config_file(c, nested);  // the same key in two objects is no repetition
  EXPECT_EQ(c["n_trees"], 9);
  const std::string list = testing::write_text(testing::scratch_dir() + "/list.json", "[1, 2]");
  EXPECT_NE(io_error_of([&] { merge_config_file(c, list); }).find("must hold a JSON object"), std::string::npos);
  const std::string folder = testing::scratch_dir();  // was "not valid JSON"
  EXPECT_NE(io_error_of([&] { merge_config_file(c, folder); }).find("is a folder, not a config file"),
            std::string::npos);
}

// A number where text is expected is its text, in a file as on the command line
// (tfidf-rf's max_features_per_split: 16 or "sqrt"); it was refused as the wrong type.
TEST(Config, ANumberInAFileIsTakenAsTextWhereTextIsExpected) {
  nlohmann::json c = sample();
  merge_config_file(c, testing::write_text(testing::scratch_dir() + "/n.json", R"({"loss": 16})"));
  EXPECT_EQ(config_string(c, "loss"), "16");
  apply_override(c, "loss=0.5");
  EXPECT_EQ(config_string(c, "loss"), "0.5");
  EXPECT_THROW(merge_config_file(c, testing::write_text(testing::scratch_dir() + "/b.json", R"({"n_trees": "7"})")),
               ConfigError);  // text where a number is expected is still refused
}

// configs/<family>.json is what scripts/gen_configs.sh writes from the family's config table:
// defaults, docs, accepted values and the order of the keys.
TEST(Config, CheckedInConfigsAreTheTables) {
  for (const std::string& family : known_families()) {
    const std::string path = testing::source_dir() + "/configs/" + family + ".json";
    ASSERT_TRUE(std::filesystem::exists(path)) << path;
    EXPECT_EQ(nlohmann::ordered_json::parse(read_file(path)), find_family(family).documented_config())
        << path << " is stale: run scripts/gen_configs.sh build/apps/newscls/newscls";
  }
}

}  // namespace
}  // namespace newscls
