#include "newscls/core/config_table.h"

#include <algorithm>

#include "newscls/core/config.h"
#include "newscls/core/error.h"

namespace newscls {
namespace {

ConfigKey make_key(std::string name, ConfigKey::Type type, nlohmann::json value, std::string doc) {
  ConfigKey key;
  key.name = std::move(name);
  key.type = type;
  key.default_value = std::move(value);
  key.doc = std::move(doc);
  return key;
}

std::string quoted_choices(const std::vector<std::string>& choices) {
  std::string text;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    if (i > 0) text += i + 1 == choices.size() ? " or " : ", ";
    text += "\"" + choices[i] + "\"";
  }
  return text;
}

}  // namespace

ConfigKey ConfigKey::integer(std::string name, long long value, long long min, long long max, std::string doc) {
  ConfigKey key = make_key(std::move(name), Type::kInteger, value, std::move(doc));
  key.min = static_cast<double>(min);
  key.max = static_cast<double>(max);
  return key;
}

ConfigKey ConfigKey::number(std::string name, double value, double min, double max, std::string doc) {
  ConfigKey key = make_key(std::move(name), Type::kNumber, value, std::move(doc));
  key.min = min;
  key.max = max;
  return key;
}

ConfigKey ConfigKey::boolean(std::string name, bool value, std::string doc) {
  return make_key(std::move(name), Type::kBoolean, value, std::move(doc));
}

ConfigKey ConfigKey::text(std::string name, std::string value, std::string doc) {
  return make_key(std::move(name), Type::kText, std::move(value), std::move(doc));
}

ConfigKey ConfigKey::choice(std::string name, std::string value, std::vector<std::string> choices, std::string doc) {
  ConfigKey key = make_key(std::move(name), Type::kText, std::move(value), std::move(doc));
  key.choices = std::move(choices);
  return key;
}

ConfigKey ConfigKey::list(std::string name, nlohmann::json value, std::string doc) {
  return make_key(std::move(name), Type::kList, std::move(value), std::move(doc));
}

ConfigKey ConfigKey::object(std::string name, nlohmann::json value, std::string doc) {
  return make_key(std::move(name), Type::kObject, std::move(value), std::move(doc));
}

ConfigKey ConfigKey::optional() && {
  absent = Absent::kDefault;
  return std::move(*this);
}

ConfigKey ConfigKey::absent_reads(nlohmann::json value) && {
  absent = Absent::kValue;
  absent_value = std::move(value);
  return std::move(*this);
}

std::string allowed_values(const ConfigKey& key) {
  switch (key.type) {
    case ConfigKey::Type::kInteger:
      return std::to_string(static_cast<long long>(key.min)) + ".." + std::to_string(static_cast<long long>(key.max));
    case ConfigKey::Type::kNumber: return nlohmann::json(key.min).dump() + ".." + nlohmann::json(key.max).dump();
    case ConfigKey::Type::kText: return quoted_choices(key.choices);
    default: return {};
  }
}

nlohmann::json checked_value(const ConfigKey& key, const nlohmann::json& config) {
  if (!config.contains(key.name)) {
    if (key.absent == ConfigKey::Absent::kDefault) return key.default_value;
    if (key.absent == ConfigKey::Absent::kValue) return key.absent_value;
  }
  switch (key.type) {
    case ConfigKey::Type::kInteger:
      return config_int(config, key.name, static_cast<long long>(key.min), static_cast<long long>(key.max));
    case ConfigKey::Type::kNumber: return config_double(config, key.name, key.min, key.max);
    case ConfigKey::Type::kBoolean: return config_bool(config, key.name);
    case ConfigKey::Type::kText: {
      const std::string value = config_string(config, key.name);
      if (!key.choices.empty() && std::find(key.choices.begin(), key.choices.end(), value) == key.choices.end()) {
        throw ConfigError(key.name, "must be " + quoted_choices(key.choices) + ", got \"" + value + "\"");
      }
      return value;
    }
    default:
      // Lists and objects: the family's Field checks them, with what it knows of the other keys.
      if (!config.contains(key.name)) throw ConfigError(key.name, "missing");
      return config.at(key.name);
  }
}

nlohmann::json config_defaults(const std::vector<ConfigKey>& keys) {
  nlohmann::json out = nlohmann::json::object();
  for (const ConfigKey& key : keys) out[key.name] = key.default_value;
  return out;
}

nlohmann::ordered_json documented_config(const std::string& family, const std::vector<ConfigKey>& keys) {
  nlohmann::ordered_json docs = nlohmann::ordered_json::object();
  docs["_"] = family + " defaults, written by scripts/gen_configs.sh from the family's config table; keys " +
              "starting with _ are ignored";
  for (const ConfigKey& key : keys) {
    const std::string allowed = allowed_values(key);
    docs[key.name] = allowed.empty() ? key.doc : key.doc + " [" + allowed + "]";
  }
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  out["_doc"] = docs;
  for (const ConfigKey& key : keys) out[key.name] = key.default_value;
  return out;
}

nlohmann::json checked_config(const std::string& family, const std::vector<ConfigKey>& keys,
                              const nlohmann::json& config) {
  check_config_keys(config, config_defaults(keys), family);
  nlohmann::json out = nlohmann::json::object();
  for (const ConfigKey& key : keys) out[key.name] = checked_value(key, config);
  return out;
}

}  // namespace newscls
