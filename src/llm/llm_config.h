// The llm family's configuration: defaults (mirrored in configs/llm.json) and validation.
//
//   LlmConfig c = LlmConfig::from_json(cfg);   // ConfigError naming the key when invalid
//   c.chat_url() == "https://api.deepseek.com/chat/completions"
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "llm/chat_api.h"
#include "llm/run_stats.h"

namespace newscls::llm {

struct LlmConfig {
  std::string base_url;
  std::string api_key_env;
  RequestOptions request;       // model, temperature, max_tokens, thinking, json_mode, extra_body
  int concurrency = 16;
  double rpm = 0;
  double timeout_s = 30;
  int max_retries = 5;
  double backoff_base_s = 0.5;
  double backoff_max_s = 30;
  double retry_after_max_s = 120;
  int few_shot = 0;
  long long limit = 0;
  std::string cache_path;       // "" = default location, "off" = no cache
  Prices prices;

  // Missing keys take their defaults; unknown keys and bad values throw ConfigError.
  static LlmConfig from_json(const nlohmann::json& config);
  std::string chat_url() const { return base_url + "/chat/completions"; }
  bool cache_enabled() const { return cache_path != "off"; }
};

nlohmann::json llm_default_config();

}  // namespace newscls::llm
