// A check every family's config table passes: for each key, the parsed defaults hold the
// table's default (so no second default hides in the code), and a value out of its range, not
// among its choices or of another type is refused with a ConfigError naming the key.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "newscls/core/config_table.h"
#include "newscls/core/error.h"

namespace newscls::testing {

inline std::vector<nlohmann::json> refused_values(const ConfigKey& key) {
  switch (key.type) {
    case ConfigKey::Type::kInteger: return {static_cast<long long>(key.min) - 1, static_cast<long long>(key.max) + 1};
    case ConfigKey::Type::kNumber: return {key.min - 1, key.max + 1};
    case ConfigKey::Type::kBoolean: return {"yes"};
    case ConfigKey::Type::kText:
      return key.choices.empty() ? std::vector<nlohmann::json>{true} : std::vector<nlohmann::json>{"no-such-value"};
    default: return {"text"};
  }
}

// parse: the family's parse_settings (the table's parse plus its checks across keys).
template <class S, class Parse>
void expect_table_holds(const ConfigTable<S>& table, Parse parse) {
  const nlohmann::json defaults = table.defaults();
  const nlohmann::json parsed = table.to_json(parse(defaults));
  for (const ConfigKey& key : table.keys()) {
    const std::string where = table.family() + "." + key.name;
    EXPECT_EQ(parsed.at(key.name), key.default_value) << where;
    for (const nlohmann::json& bad : refused_values(key)) {
      nlohmann::json config = defaults;
      config[key.name] = bad;
      try {
        parse(config);
        ADD_FAILURE() << where << " accepted " << bad.dump();
      } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("'" + key.name + "'"), std::string::npos) << where << ": " << e.what();
      }
    }
  }
}

}  // namespace newscls::testing
