#include "newscls/core/json_parse.h"

#include <set>
#include <vector>

namespace newscls {

nlohmann::json parse_json_unique_keys(std::string_view text, const std::function<void(const std::string&)>& on_repeat) {
  std::vector<std::set<std::string>> keys_of_open_objects;
  const auto check = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start) keys_of_open_objects.emplace_back();
    if (event == Event::object_end) keys_of_open_objects.pop_back();
    if (event == Event::key && !keys_of_open_objects.back().insert(parsed.get<std::string>()).second) {
      on_repeat(parsed.get<std::string>());
    }
    return true;
  };
  return nlohmann::json::parse(text.begin(), text.end(), check);
}

}  // namespace newscls
