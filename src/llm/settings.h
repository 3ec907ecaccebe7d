// The llm family's configuration: its table of keys (configs/llm.json is generated from it)
// and their validation into Settings.
//
// thinking "auto" sends DeepSeek's thinking field ({"type": "disabled"}) only when the
// base_url host is DeepSeek's (deepseek.com or a subdomain), since other providers may
// reject unknown fields; "enabled" and "disabled" always send it; "omit" never does.
//
//   Settings c = parse_settings(cfg);   // ConfigError naming the key when invalid
//   c.chat_url() == "https://api.deepseek.com/chat/completions"
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "llm/chat_api.h"
#include "llm/run_stats.h"
#include "newscls/core/config_table.h"

namespace newscls::llm {

// Values come from settings_table() and the given config only (no defaults here).
struct Settings {
  std::string base_url;
  std::string api_key_env;
  bool allow_insecure_http{};
  RequestOptions request;  // model, temperature, max_tokens, thinking (resolved), json_mode, extra_body
  std::string thinking;    // as configured ("auto" too)
  int concurrency{};
  double rpm{};
  double timeout_s{};
  int max_retries{};
  double backoff_base_s{};
  double backoff_max_s{};
  double retry_after_max_s{};
  int few_shot{};
  long long limit{};
  std::string cache_path;  // "" = default location, "off" = no cache
  Prices prices;

  std::string chat_url() const { return base_url + "/chat/completions"; }
  bool cache_enabled() const { return cache_path != "off"; }
};

// Each key with its default, range and doc: the one source of all of them.
const ConfigTable<Settings>& settings_table();
// Missing keys take their defaults; unknown keys and bad values throw ConfigError.
Settings parse_settings(const nlohmann::json& config);
// The defaults without docs.
nlohmann::json llm_default_config();
// The defaults overridden by config: unknown keys refused by check_config_keys, and a
// value of another type than its default's refused; values are not yet range-checked.
nlohmann::json effective_llm_config(const nlohmann::json& config);
// "auto" -> "disabled" for a DeepSeek host, else "omit"; other settings unchanged.
std::string resolve_thinking(const std::string& setting, const std::string& base_url);

}  // namespace newscls::llm
