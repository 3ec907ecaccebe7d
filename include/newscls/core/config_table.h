// A family's config table: each key once, with its default, the values it accepts and one
// line of doc. The defaults, the parsing and validation of a config, `newscls info --defaults`
// and configs/<family>.json (scripts/gen_configs.sh) all read it, so a default is written once.
//
// A key's Field binds it to the member of the family's Settings that holds it, both ways:
// parse fills every member from the config, to_json writes them back.
//
//   const ConfigTable<Settings>& table() {
//     static const ConfigTable<Settings> t("fasttext", {
//         {ConfigKey::integer("dim", 50, 1, 1024, "Embedding size"), field(&Settings::dim)},
//         {ConfigKey::boolean("idf", true, "IDF weights").optional(), field(&Settings::idf)},
//     });
//     return t;
//   }
//   Settings s = table().parse(config);   // ConfigError naming the key
#pragma once

#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace newscls {

struct ConfigKey {
  enum class Type { kInteger, kNumber, kBoolean, kText, kList, kObject };
  // What a config without the key reads: a bundle written before the key existed loads with
  // the value it was trained with, which need not be today's default.
  enum class Absent { kRefused, kDefault, kValue };

  std::string name;
  Type type = Type::kText;
  nlohmann::json default_value;
  double min = 0, max = 0;           // kInteger, kNumber: the accepted range
  std::vector<std::string> choices;  // kText: the accepted values; empty: any text
  std::string doc;
  Absent absent = Absent::kRefused;
  nlohmann::json absent_value;  // kValue

  static ConfigKey integer(std::string name, long long value, long long min, long long max, std::string doc);
  static ConfigKey number(std::string name, double value, double min, double max, std::string doc);
  static ConfigKey boolean(std::string name, bool value, std::string doc);
  // Any text; a family's Field checks more where it must.
  static ConfigKey text(std::string name, std::string value, std::string doc);
  static ConfigKey choice(std::string name, std::string value, std::vector<std::string> choices, std::string doc);
  static ConfigKey list(std::string name, nlohmann::json value, std::string doc);
  static ConfigKey object(std::string name, nlohmann::json value, std::string doc);

  // A config without the key reads its default.
  ConfigKey optional() &&;
  // A config without the key reads `value` (what bundles written before the key meant).
  ConfigKey absent_reads(nlohmann::json value) &&;
};

// The values a key accepts, as info and configs/*.json show them: "1..1024", "\"mean\" or
// \"l2\""; empty for any value of its type.
std::string allowed_values(const ConfigKey& key);
// The key's value in `config` (absent as the key says), checked against its type, range and
// choices; integers come back as integers. ConfigError naming the key otherwise.
nlohmann::json checked_value(const ConfigKey& key, const nlohmann::json& config);
// Every key's default, without docs.
nlohmann::json config_defaults(const std::vector<ConfigKey>& keys);
// configs/<family>.json: "_doc" first (each key's doc and accepted values), then the defaults,
// in the table's order.
nlohmann::ordered_json documented_config(const std::string& family, const std::vector<ConfigKey>& keys);
// The config without doc keys, every key checked (unknown keys refused, as check_config_keys).
nlohmann::json checked_config(const std::string& family, const std::vector<ConfigKey>& keys,
                              const nlohmann::json& config);

// How a key's checked value reaches its Settings member and back.
template <class S>
struct Field {
  std::function<void(S&, const nlohmann::json&)> store;
  std::function<nlohmann::json(const S&)> load;
};

// The member at the end of a path of member pointers: field(&Settings::tokens, &Tokens::ngram_min).
template <class S, class T, class... Rest>
Field<S> field(T S::*first, Rest... rest) {
  return {[=](S& s, const nlohmann::json& v) {
            auto& member = ((s.*first).*....*rest);
            member = v.get<std::remove_reference_t<decltype(member)>>();
          },
          [=](const S& s) { return nlohmann::json(((s.*first).*....*rest)); }};
}

// A member of another type than the JSON value: an enum read from its name.
template <class S, class T, class From, class To>
Field<S> field_as(T S::*member, From from, To to) {
  return {[=](S& s, const nlohmann::json& v) { s.*member = from(v.get<std::string>()); },
          [=](const S& s) { return nlohmann::json(to(s.*member)); }};
}

template <class S>
struct ConfigRow {
  ConfigKey key;
  Field<S> field;
};

template <class S>
class ConfigTable {
 public:
  ConfigTable(std::string family, std::vector<ConfigRow<S>> rows) : family_(std::move(family)), rows_(std::move(rows)) {
    for (const ConfigRow<S>& row : rows_) keys_.push_back(row.key);
  }

  const std::string& family() const { return family_; }
  const std::vector<ConfigKey>& keys() const { return keys_; }
  nlohmann::json defaults() const { return config_defaults(keys_); }
  nlohmann::ordered_json documented() const { return documented_config(family_, keys_); }

  // Fields are stored in the table's order, so a Field may read the members stored before it.
  S parse(const nlohmann::json& config) const {
    const nlohmann::json checked = checked_config(family_, keys_, config);
    S s{};
    for (const ConfigRow<S>& row : rows_) row.field.store(s, checked.at(row.key.name));
    return s;
  }
  nlohmann::json to_json(const S& s) const {
    nlohmann::json out = nlohmann::json::object();
    for (const ConfigRow<S>& row : rows_) out[row.key.name] = row.field.load(s);
    return out;
  }

 private:
  std::string family_;
  std::vector<ConfigRow<S>> rows_;
  std::vector<ConfigKey> keys_;
};

}  // namespace newscls
