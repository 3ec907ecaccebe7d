// Model configs: JSON objects with documented defaults, overridden by a file and --set.
//
// Precedence: compiled-in defaults (mirrored in configs/<model>.json), then --config FILE,
// then each --set key=value, then the family's own validation. Keys starting with "_" are
// documentation and ignored. An unknown key or a value of the wrong type is a ConfigError
// naming the key.
//
//   nlohmann::json cfg = default_config;
//   merge_config_file(cfg, "my.json");
//   apply_override(cfg, "n_trees=10");
//   int n = config_int(cfg, "n_trees", 1, 100000);
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace newscls {

// One hash per setting, named: "config.lr", "seed", ... Ranks of a distributed run compare
// them, so that a rank started with another --set is told which one.
using SettingsFingerprint = std::vector<std::pair<std::string, std::int64_t>>;
// Each top-level key of `settings` is a part; an object's keys (the config) are parts of their
// own, named "<key>.<subkey>".
SettingsFingerprint fingerprint_parts(const nlohmann::json& settings);

void merge_config_file(nlohmann::json& config, const std::string& path);
// A config file's JSON object, as merge_config_file reads it; IoError naming path otherwise.
nlohmann::json read_config_file(const std::string& path);
void merge_config(nlohmann::json& config, const nlohmann::json& overrides, const std::string& origin);
// "key=value": value parsed as JSON when it parses, else taken as a string.
void apply_override(nlohmann::json& config, const std::string& assignment);
// The config without "_"-prefixed documentation keys.
nlohmann::json strip_docs(const nlohmann::json& config);
// The one unknown-key policy of every family: a key of `config` (documentation keys aside)
// that `defaults` lacks is a ConfigError "unknown key for <family>".
void check_config_keys(const nlohmann::json& config, const nlohmann::json& defaults, const std::string& family);

// Typed getters that throw ConfigError(key, ...) when missing, mistyped or out of range.
long long config_int(const nlohmann::json& config, const std::string& key, long long min, long long max);
double config_double(const nlohmann::json& config, const std::string& key, double min, double max);
bool config_bool(const nlohmann::json& config, const std::string& key);
std::string config_string(const nlohmann::json& config, const std::string& key);

}  // namespace newscls
