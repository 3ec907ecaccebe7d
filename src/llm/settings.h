// The llm family's configuration: defaults (mirrored in configs/llm.json) and validation.
//
// thinking "auto" sends DeepSeek's thinking field ({"type": "disabled"}) only when the
// base_url host is DeepSeek's (deepseek.com or a subdomain), since other providers may
// reject unknown fields; "enabled" and "disabled" always send it; "omit" never does.
//
//   LlmConfig c = LlmConfig::from_json(cfg);   // ConfigError naming the key when invalid
//   c.chat_url() == "https://api.deepseek.com/chat/completions"
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "llm/chat_api.h"
#include "llm/run_stats.h"

namespace newscls::llm {

// Values come from llm_default_config() and the given config only (no defaults here).
struct LlmConfig {
  std::string base_url;
  std::string api_key_env;
  bool allow_insecure_http = false;
  RequestOptions request;       // model, temperature, max_tokens, thinking (resolved), json_mode, extra_body
  int concurrency = 0;
  double rpm = 0;
  double timeout_s = 0;
  int max_retries = 0;
  double backoff_base_s = 0;
  double backoff_max_s = 0;
  double retry_after_max_s = 0;
  int few_shot = 0;
  long long limit = 0;
  std::string cache_path;       // "" = default location, "off" = no cache
  Prices prices;

  // Missing keys take their defaults; unknown keys and bad values throw ConfigError.
  static LlmConfig from_json(const nlohmann::json& config);
  std::string chat_url() const { return base_url + "/chat/completions"; }
  bool cache_enabled() const { return cache_path != "off"; }
};

// The compiled-in defaults: the one source configs/llm.json mirrors (a unit test checks).
nlohmann::json llm_default_config();
// The defaults overridden by config: unknown keys refused by check_config_keys, and a
// value of another type than its default's refused; values are not yet range-checked.
nlohmann::json effective_llm_config(const nlohmann::json& config);
// "auto" -> "disabled" for a DeepSeek host, else "omit"; other settings unchanged.
std::string resolve_thinking(const std::string& setting, const std::string& base_url);

}  // namespace newscls::llm
