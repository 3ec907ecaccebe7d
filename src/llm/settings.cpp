#include "llm/settings.h"

#include "llm/api_key.h"
#include "newscls/core/config.h"
#include "newscls/core/error.h"

namespace newscls::llm {
namespace {

std::string checked_base_url(const nlohmann::json& config) {
  std::string url = config_string(config, "base_url");
  while (!url.empty() && url.back() == '/') url.pop_back();
  if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) {
    throw ConfigError("base_url", "must start with http:// or https://, got '" + url + "'");
  }
  // A stray space made a loopback URL read as "not loopback" (the host did not parse).
  for (const unsigned char c : url) {
    if (c <= 0x20 || c == 0x7f) throw ConfigError("base_url", "'" + url + "' holds a space or a control character");
  }
  return url;
}

std::string non_empty(const nlohmann::json& config, const std::string& key) {
  std::string value = config_string(config, key);
  if (value.empty()) throw ConfigError(key, "must not be empty");
  return value;
}

bool is_deepseek_host(const std::string& host) {
  const std::string domain = "deepseek.com";
  return host == domain ||
         (host.size() > domain.size() && host.compare(host.size() - domain.size() - 1, std::string::npos,
                                                      "." + domain) == 0);
}

RequestOptions read_request(const nlohmann::json& config, const std::string& base_url) {
  RequestOptions r;
  r.model = non_empty(config, "model");
  r.temperature = config_double(config, "temperature", 0, 2);
  r.max_tokens = static_cast<int>(config_int(config, "max_tokens", 1, 32768));
  const std::string thinking = config_string(config, "thinking");
  if (thinking != "auto" && thinking != "disabled" && thinking != "enabled" && thinking != "omit") {
    throw ConfigError("thinking", "must be \"auto\", \"disabled\", \"enabled\" or \"omit\", got '" +
                                      thinking + "'");
  }
  r.thinking = resolve_thinking(thinking, base_url);
  r.json_mode = config_bool(config, "json_mode");
  r.extra_body = config.at("extra_body");
  if (!r.extra_body.is_object()) throw ConfigError("extra_body", "must be a JSON object");
  return r;
}

}  // namespace

nlohmann::json llm_default_config() {
  return {
      {"base_url", "https://api.deepseek.com"},
      {"model", "deepseek-chat"},
      {"api_key_env", kDefaultKeyEnv},
      {"allow_insecure_http", false},
      {"temperature", 0.0},
      {"max_tokens", 16},
      {"thinking", "auto"},
      {"json_mode", false},
      {"extra_body", nlohmann::json::object()},
      {"concurrency", 16},
      {"rpm", 0.0},
      {"timeout_s", 30.0},
      {"max_retries", 5},
      {"backoff_base_s", 0.5},
      {"backoff_max_s", 30.0},
      {"retry_after_max_s", 120.0},
      {"few_shot", 0},
      {"limit", 0},
      {"cache_path", ""},
      {"price_input_per_m", 0.28},
      {"price_cached_input_per_m", 0.028},
      {"price_output_per_m", 0.42},
  };
}

nlohmann::json effective_llm_config(const nlohmann::json& given) {
  nlohmann::json config = llm_default_config();
  check_config_keys(given, config, "llm");
  merge_config(config, given, "llm config");
  return config;
}

std::string resolve_thinking(const std::string& setting, const std::string& base_url) {
  if (setting != "auto") return setting;
  return is_deepseek_host(url_host(base_url)) ? "disabled" : "omit";
}

LlmConfig LlmConfig::from_json(const nlohmann::json& given) {
  const nlohmann::json config = effective_llm_config(given);
  LlmConfig c;
  c.base_url = checked_base_url(config);
  c.api_key_env = non_empty(config, "api_key_env");
  c.allow_insecure_http = config_bool(config, "allow_insecure_http");
  check_key_transport(c.base_url, c.allow_insecure_http);
  c.request = read_request(config, c.base_url);
  c.concurrency = static_cast<int>(config_int(config, "concurrency", 1, 1024));
  c.rpm = config_double(config, "rpm", 0, 1e7);
  c.timeout_s = config_double(config, "timeout_s", 0.01, 3600);
  c.max_retries = static_cast<int>(config_int(config, "max_retries", 0, 100));
  c.backoff_base_s = config_double(config, "backoff_base_s", 0, 3600);
  c.backoff_max_s = config_double(config, "backoff_max_s", 0, 3600);
  c.retry_after_max_s = config_double(config, "retry_after_max_s", 0, 86400);
  c.few_shot = static_cast<int>(config_int(config, "few_shot", 0, 100));
  c.limit = config_int(config, "limit", 0, 1000000000);
  c.cache_path = config_string(config, "cache_path");
  c.prices.input_per_m = config_double(config, "price_input_per_m", 0, 1e6);
  c.prices.cached_input_per_m = config_double(config, "price_cached_input_per_m", 0, 1e6);
  c.prices.output_per_m = config_double(config, "price_output_per_m", 0, 1e6);
  return c;
}

}  // namespace newscls::llm
