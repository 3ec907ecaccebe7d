// The cascade family's config: its table of keys (configs/cascade.json is generated from it)
// and their validation into Settings.
//
//   Settings s = parse_settings(config);   // ConfigError naming the key
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "newscls/core/config_table.h"

namespace newscls::cascade {

// Filled from settings_table() by parse_settings (no defaults here).
struct Settings {
  std::string members;  // bundle folders, comma-separated
  double last_share{};
  int candidates{};
  double slack{};
  std::string combine;
};

// Each key with its default, range and doc: the one source of all of them.
const ConfigTable<Settings>& settings_table();
// The config over the defaults (a key missing takes its default); ConfigError naming a bad key.
Settings parse_settings(const nlohmann::json& config);

}  // namespace newscls::cascade
