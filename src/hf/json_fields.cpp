#include "hf/json_fields.h"

#include <cstdint>
#include <fstream>
#include <sstream>

#include "newscls/core/error.h"

namespace newscls::hf {

using nlohmann::json;

namespace {

// The value under key, or nullptr when it is absent or null.
const json* lookup(const json& j, const std::string& key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return nullptr;
  return &*it;
}

}  // namespace

void refuse_key(const std::string& path, const std::string& key, const std::string& message) {
  throw ModelFormatError(path, "key '" + key + "' " + message);
}

std::string describe_json(const json& value) {
  std::string shown = value.dump();
  if (shown.size() > 40) shown = shown.substr(0, 37) + "...";
  return std::string(value.type_name()) + " " + shown;
}

json read_json_object(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(path, "cannot open");
  std::stringstream buffer;
  buffer << in.rdbuf();
  json j;
  try {
    j = json::parse(buffer.str());
  } catch (const json::exception& e) {
    throw ModelFormatError(path, std::string("not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw ModelFormatError(path, "not a JSON object");
  return j;
}

std::int64_t get_int(const json& j, const std::string& key, std::int64_t fallback, const std::string& path) {
  const json* v = lookup(j, key);
  if (v == nullptr) return fallback;
  if (v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
    refuse_key(path, key, "is out of range");
  }
  if (!v->is_number_integer()) refuse_key(path, key, "must be an integer, found " + describe_json(*v));
  return v->get<std::int64_t>();
}

double get_number(const json& j, const std::string& key, double fallback, const std::string& path) {
  const json* v = lookup(j, key);
  if (v == nullptr) return fallback;
  if (!v->is_number()) refuse_key(path, key, "must be a number, found " + describe_json(*v));
  return v->get<double>();
}

bool get_bool(const json& j, const std::string& key, bool fallback, const std::string& path) {
  return get_optional_bool(j, key, path).value_or(fallback);
}

std::optional<bool> get_optional_bool(const json& j, const std::string& key, const std::string& path) {
  const json* v = lookup(j, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_boolean()) refuse_key(path, key, "must be true or false, found " + describe_json(*v));
  return v->get<bool>();
}

std::string get_string(const json& j, const std::string& key, const std::string& fallback, const std::string& path) {
  const json* v = lookup(j, key);
  if (v == nullptr) return fallback;
  if (!v->is_string()) refuse_key(path, key, "must be a string, found " + describe_json(*v));
  return v->get<std::string>();
}

std::vector<std::string> get_strings(const json& j, const std::string& key, const std::string& path) {
  const json* v = lookup(j, key);
  if (v == nullptr) return {};
  if (!v->is_array()) refuse_key(path, key, "must be a list of strings, found " + describe_json(*v));
  std::vector<std::string> out;
  for (const json& item : *v) {
    if (!item.is_string()) refuse_key(path, key, "must be a list of strings, found " + describe_json(item));
    out.push_back(item.get<std::string>());
  }
  return out;
}

}  // namespace newscls::hf
