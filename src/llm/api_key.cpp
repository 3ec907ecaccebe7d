#include "llm/api_key.h"

#include <cstdlib>

#include <curl/curl.h>

#include "newscls/error.h"

namespace newscls::llm {
namespace {

std::string env_value(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  return value ? value : "";
}

std::string url_host(const std::string& url) {
  CURLU* handle = curl_url();
  if (!handle) return "";
  std::string host;
  char* part = nullptr;
  if (curl_url_set(handle, CURLUPART_URL, url.c_str(), 0) == CURLUE_OK &&
      curl_url_get(handle, CURLUPART_HOST, &part, 0) == CURLUE_OK) {
    host = part;
    curl_free(part);
  }
  curl_url_cleanup(handle);
  return host;
}

}  // namespace

bool is_loopback_url(const std::string& url) {
  const std::string host = url_host(url);
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "[::1]" || host == "::1";
}

std::string key_variables(const std::string& key_env) {
  if (key_env == kDefaultKeyEnv) return std::string(kDefaultKeyEnv) + " (or " + kFallbackKeyEnv + ")";
  return key_env;
}

ApiKey resolve_api_key(const std::string& key_env, const std::string& base_url) {
  if (std::string value = env_value(key_env); !value.empty()) return {value, key_env};
  if (key_env == kDefaultKeyEnv) {
    if (std::string value = env_value(kFallbackKeyEnv); !value.empty()) return {value, kFallbackKeyEnv};
  }
  if (is_loopback_url(base_url)) return {"sk-local-no-key", ""};
  throw ConfigError("api_key_env", "no API key for " + base_url + ": set the environment variable " +
                                       key_variables(key_env));
}

std::string unavailable_reason(const nlohmann::json& config) {
  try {
    resolve_api_key(config.value("api_key_env", kDefaultKeyEnv), config.value("base_url", ""));
    return {};
  } catch (const ConfigError& e) {
    return e.what();
  }
}

}  // namespace newscls::llm
