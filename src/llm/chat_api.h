// The OpenAI-compatible chat-completions wire format: request bodies and replies.
//
// Works with DeepSeek, OpenAI, vLLM, llama.cpp's server and Ollama. Token usage is read
// from "usage": prompt_tokens, completion_tokens, and cached prompt tokens from
// DeepSeek's prompt_cache_hit_tokens or OpenAI's prompt_tokens_details.cached_tokens.
//
//   std::string body = build_request_body(options, prompt.messages(title));
//   ChatReply reply; std::string why;
//   if (!parse_chat_reply(http_body, reply, why)) retry...;
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "llm/run_stats.h"

namespace newscls::llm {

// Filled from the config (settings_table() holds the defaults).
struct RequestOptions {
  std::string model;
  double temperature = 0;
  int max_tokens = 0;
  std::string thinking = "omit";  // "disabled", "enabled" or "omit" (send no field); "auto" is resolved before
  bool json_mode = false;
  nlohmann::json extra_body = nlohmann::json::object();  // merged last, top level
};

std::string build_request_body(const RequestOptions& options, const nlohmann::json& messages);

struct ChatReply {
  std::string content;  // "" for a null or blank reply
  Usage usage;
};

// False, with the reason in why, when body is not a chat completion (malformed JSON,
// no choices, no message): a server fault worth a retry.
bool parse_chat_reply(std::string_view body, ChatReply& reply, std::string& why);

// The "error.message" of an API error body, else the body's start; for error messages.
std::string error_excerpt(std::string_view body);

}  // namespace newscls::llm
