#include "newscls/core/config.h"

#include <cmath>
#include <filesystem>
#include <string>

#include "newscls/core/atomic_file.h"
#include "newscls/core/error.h"
#include "newscls/core/json_parse.h"
#include "newscls/core/sha256.h"

namespace newscls {
namespace {

bool is_doc_key(const std::string& key) { return !key.empty() && key[0] == '_'; }

const char* type_name(const nlohmann::json& v) {
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "a list";
  if (v.is_object()) return "an object";
  return "null";
}

bool same_kind(const nlohmann::json& a, const nlohmann::json& b) {
  if (a.is_number() && b.is_number()) return true;
  return a.type() == b.type();
}

const nlohmann::json& lookup(const nlohmann::json& config, const std::string& key) {
  auto it = config.find(key);
  if (it == config.end()) throw ConfigError(key, "missing");
  return *it;
}

// "; known keys: a, b, c": an unknown key's error says what would have been accepted.
std::string known_keys_text(const nlohmann::json& config) {
  std::string text;
  for (auto it = config.begin(); it != config.end(); ++it) {
    if (!is_doc_key(it.key())) text += (text.empty() ? "; known keys: " : ", ") + it.key();
  }
  return text;
}

}  // namespace

void merge_config(nlohmann::json& config, const nlohmann::json& overrides, const std::string& origin) {
  if (!overrides.is_object()) throw ConfigError(origin, "a config must be a JSON object");
  for (auto it = overrides.begin(); it != overrides.end(); ++it) {
    if (is_doc_key(it.key())) continue;
    auto target = config.find(it.key());
    if (target == config.end()) {
      throw ConfigError(it.key(), "unknown key (in " + origin + ")" + known_keys_text(config));
    }
    // A number where text is expected is taken as its text, as --set takes it
    // (max_features_per_split: 16 or "sqrt"); the family's own check judges the text.
    if (target->is_string() && it.value().is_number()) {
      *target = it.value().dump();
      continue;
    }
    if (!same_kind(*target, it.value())) {
      throw ConfigError(it.key(), std::string("expected ") + type_name(*target) + ", got " + type_name(it.value()) +
                                      " (in " + origin + ")");
    }
    *target = it.value();
  }
}

nlohmann::json read_config_file(const std::string& path) {
  nlohmann::json file_config;
  if (std::error_code ec; std::filesystem::is_directory(path, ec))
    throw IoError(path, "is a folder, not a config file");
  try {
    // A key given twice: JSON parsers keep the last silently, and which one the user meant is unknown.
    file_config = parse_json_unique_keys(
        read_file(path), [&](const std::string& key) { throw IoError(path, "key '" + key + "' appears twice"); });
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range: a number too large
    throw IoError(path, std::string("not valid JSON: ") + e.what());
  }
  if (!file_config.is_object()) throw IoError(path, "a config file must hold a JSON object");
  return file_config;
}

void merge_config_file(nlohmann::json& config, const std::string& path) {
  merge_config(config, read_config_file(path), path);
}

void apply_override(nlohmann::json& config, const std::string& assignment) {
  const std::size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw UsageError("--set expects key=value, got '" + assignment + "'");
  }
  const std::string key = assignment.substr(0, eq);
  const std::string text = assignment.substr(eq + 1);
  // "_" keys document a config file; set on the command line, one is a typo that would be ignored.
  if (is_doc_key(key)) throw ConfigError(key, "unknown key (in --set " + key + ")");
  nlohmann::json value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded() || (config.contains(key) && config[key].is_string())) value = text;
  merge_config(config, nlohmann::json{{key, value}}, "--set " + key);
}

namespace {

// The name is hashed too: ranks of two versions with a key renamed are told apart.
std::int64_t hash_of(const std::string& name, const nlohmann::json& value) {
  return static_cast<std::int64_t>(std::stoull(sha256_hex(name + "=" + value.dump()).substr(0, 15), nullptr, 16));
}

}  // namespace

SettingsFingerprint fingerprint_parts(const nlohmann::json& settings) {
  SettingsFingerprint parts;
  for (auto it = settings.begin(); it != settings.end(); ++it) {
    if (!it.value().is_object()) {
      parts.emplace_back(it.key(), hash_of(it.key(), it.value()));
      continue;
    }
    for (auto sub = it.value().begin(); sub != it.value().end(); ++sub) {
      const std::string name = it.key() + "." + sub.key();
      parts.emplace_back(name, hash_of(name, sub.value()));
    }
  }
  return parts;
}

nlohmann::json strip_docs(const nlohmann::json& config) {
  nlohmann::json out = nlohmann::json::object();
  for (auto it = config.begin(); it != config.end(); ++it) {
    if (!is_doc_key(it.key())) out[it.key()] = it.value();
  }
  return out;
}

void check_config_keys(const nlohmann::json& config, const nlohmann::json& defaults, const std::string& family) {
  if (!config.is_object()) throw ConfigError(family, "a config must be a JSON object");
  for (auto it = config.begin(); it != config.end(); ++it) {
    if (!is_doc_key(it.key()) && !defaults.contains(it.key())) {
      throw ConfigError(it.key(), "unknown key for " + family + known_keys_text(defaults));
    }
  }
}

long long config_int(const nlohmann::json& config, const std::string& key, long long min, long long max) {
  const nlohmann::json& v = lookup(config, key);
  if (!v.is_number()) throw ConfigError(key, std::string("expected an integer, got ") + type_name(v));
  const double d = v.get<double>();
  if (std::floor(d) != d) throw ConfigError(key, "expected an integer, got " + v.dump());
  if (d < static_cast<double>(min) || d > static_cast<double>(max)) {
    throw ConfigError(key, v.dump() + " is out of range " + std::to_string(min) + ".." + std::to_string(max));
  }
  return static_cast<long long>(d);
}

double config_double(const nlohmann::json& config, const std::string& key, double min, double max) {
  const nlohmann::json& v = lookup(config, key);
  if (!v.is_number()) throw ConfigError(key, std::string("expected a number, got ") + type_name(v));
  const double d = v.get<double>();
  if (!(d >= min && d <= max)) {
    throw ConfigError(key,
                      v.dump() + " is out of range " + nlohmann::json(min).dump() + ".." + nlohmann::json(max).dump());
  }
  return d;
}

bool config_bool(const nlohmann::json& config, const std::string& key) {
  const nlohmann::json& v = lookup(config, key);
  if (!v.is_boolean()) throw ConfigError(key, std::string("expected true or false, got ") + type_name(v));
  return v.get<bool>();
}

std::string config_string(const nlohmann::json& config, const std::string& key) {
  const nlohmann::json& v = lookup(config, key);
  if (!v.is_string()) throw ConfigError(key, std::string("expected a string, got ") + type_name(v));
  return v.get<std::string>();
}

}  // namespace newscls
