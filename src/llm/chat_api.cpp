#include "llm/chat_api.h"

namespace newscls::llm {
namespace {

long long int_field(const nlohmann::json& obj, const char* key) {
  if (!obj.is_object()) return 0;
  auto it = obj.find(key);
  return it != obj.end() && it->is_number_integer() ? it->get<long long>() : 0;
}

Usage read_usage(const nlohmann::json& usage) {
  Usage u;
  u.prompt_tokens = int_field(usage, "prompt_tokens");
  u.completion_tokens = int_field(usage, "completion_tokens");
  u.cached_tokens = int_field(usage, "prompt_cache_hit_tokens");
  if (u.cached_tokens == 0 && usage.is_object() && usage.contains("prompt_tokens_details")) {
    u.cached_tokens = int_field(usage["prompt_tokens_details"], "cached_tokens");
  }
  return u;
}

}  // namespace

std::string build_request_body(const RequestOptions& options, const nlohmann::json& messages) {
  nlohmann::json body = {
      {"model", options.model},           {"messages", messages}, {"temperature", options.temperature},
      {"max_tokens", options.max_tokens}, {"stream", false},
  };
  if (options.thinking != "omit") body["thinking"] = {{"type", options.thinking}};
  if (options.json_mode) body["response_format"] = {{"type", "json_object"}};
  for (auto it = options.extra_body.begin(); it != options.extra_body.end(); ++it) {
    body[it.key()] = it.value();
  }
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool parse_chat_reply(std::string_view body, ChatReply& reply, std::string& why) {
  const auto parsed = nlohmann::json::parse(body, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    why = "reply is not a JSON object";
    return false;
  }
  auto choices = parsed.find("choices");
  if (choices == parsed.end() || !choices->is_array() || choices->empty() || !(*choices)[0].is_object() ||
      !(*choices)[0].contains("message") || !(*choices)[0]["message"].is_object()) {
    why = "reply has no choices[0].message";
    return false;
  }
  const nlohmann::json& message = (*choices)[0]["message"];
  auto content = message.find("content");
  reply.content = content != message.end() && content->is_string() ? content->get<std::string>() : "";
  reply.usage = read_usage(parsed.value("usage", nlohmann::json::object()));
  return true;
}

std::string error_excerpt(std::string_view body) {
  const auto parsed = nlohmann::json::parse(body, nullptr, false);
  if (parsed.is_object() && parsed.contains("error")) {
    const auto& error = parsed["error"];
    if (error.is_object() && error.contains("message") && error["message"].is_string()) {
      return error["message"].get<std::string>();
    }
    if (error.is_string()) return error.get<std::string>();
  }
  std::string excerpt(body.substr(0, 200));
  for (char& c : excerpt) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return excerpt;
}

}  // namespace newscls::llm
