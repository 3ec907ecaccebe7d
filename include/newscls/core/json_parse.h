// JSON read strictly: a key given twice in one object is refused, not kept last-wins.
//
//   const nlohmann::json j = parse_json_unique_keys(text, [&](const std::string& key) {
//     throw IoError(path, "key '" + key + "' appears twice");
//   });
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace newscls {

// Parses text as nlohmann::json::parse does (its parse_error on bad JSON), calling on_repeat
// with a key seen twice in one object; on_repeat is expected to throw. The same key in two
// objects is no repetition.
nlohmann::json parse_json_unique_keys(std::string_view text, const std::function<void(const std::string&)>& on_repeat);

}  // namespace newscls
