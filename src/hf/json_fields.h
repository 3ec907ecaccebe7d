// Typed reads of Hugging Face JSON files (config.json, tokenizer_config.json). Every failure
// is a one-line ModelFormatError naming the file and the key: "config.json: key
// 'hidden_size' must be an integer, found string \"64\"". Absent keys and JSON null give the
// caller's default, as transformers does.
//
//   const nlohmann::json j = read_json_object(path);
//   std::int64_t h = get_int(j, "hidden_size", 768, path);
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace newscls::hf {

// The file's top-level JSON object (IoError when unreadable, ModelFormatError otherwise).
nlohmann::json read_json_object(const std::string& path);

std::int64_t get_int(const nlohmann::json& j, const std::string& key, std::int64_t fallback, const std::string& path);
double get_number(const nlohmann::json& j, const std::string& key, double fallback, const std::string& path);
bool get_bool(const nlohmann::json& j, const std::string& key, bool fallback, const std::string& path);
std::optional<bool> get_optional_bool(const nlohmann::json& j, const std::string& key, const std::string& path);
std::string get_string(const nlohmann::json& j, const std::string& key, const std::string& fallback,
                       const std::string& path);
std::vector<std::string> get_strings(const nlohmann::json& j, const std::string& key, const std::string& path);

[[noreturn]] void refuse_key(const std::string& path, const std::string& key, const std::string& message);
// "string \"64\"", "array", ...: how a wrong value is named in an error.
std::string describe_json(const nlohmann::json& value);

}  // namespace newscls::hf
