#include "llm/api_key.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include <curl/curl.h>

#include "llm/settings.h"
#include "newscls/core/error.h"

namespace newscls::llm {
namespace {

std::string env_value(const std::string& name) {
  const char* value = name.empty() ? nullptr : std::getenv(name.c_str());
  return value ? value : "";
}

// 127.0.0.0/8 as a dotted quad only: "127.example.com" is a remote name.
bool is_loopback_ipv4(const std::string& host) {
  in_addr addr{};
  if (inet_pton(AF_INET, host.c_str(), &addr) != 1) return false;
  return (ntohl(addr.s_addr) >> 24) == 127;
}

std::string string_or(const nlohmann::json& config, const char* key, const std::string& fallback) {
  if (!config.is_object()) return fallback;
  auto it = config.find(key);
  return it != config.end() && it->is_string() ? it->get<std::string>() : fallback;
}

}  // namespace

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
  std::transform(host.begin(), host.end(), host.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return host;
}

bool is_loopback_url(const std::string& url) {
  const std::string host = url_host(url);
  return host == "localhost" || host == "[::1]" || host == "::1" || is_loopback_ipv4(host);
}

std::string key_variables(const std::string& key_env) {
  if (key_env == kDefaultKeyEnv) return std::string(kDefaultKeyEnv) + " (or " + kFallbackKeyEnv + ")";
  return key_env;
}

namespace {

// A key read from a CRLF file broke the request's header: the server's 400 pointed at the model.
ApiKey checked_key(std::string value, const std::string& variable) {
  for (const unsigned char c : value) {
    if (c < 0x20 || c == 0x7f) {
      throw ConfigError("api_key_env", variable +
                                           " holds a line break or another control character; "
                                           "set it to the key alone");
    }
  }
  return ApiKey{std::move(value), variable};
}

}  // namespace

std::optional<ApiKey> find_api_key(const std::string& key_env) {
  if (std::string value = env_value(key_env); !value.empty()) return checked_key(value, key_env);
  if (key_env == kDefaultKeyEnv) {
    if (std::string value = env_value(kFallbackKeyEnv); !value.empty()) return checked_key(value, kFallbackKeyEnv);
  }
  return std::nullopt;
}

ApiKey resolve_api_key(const std::string& key_env, const std::string& base_url) {
  if (auto key = find_api_key(key_env)) return *key;
  if (is_loopback_url(base_url)) return {"sk-local-no-key", ""};
  throw ConfigError("api_key_env",
                    "no API key for " + base_url + ": set the environment variable " + key_variables(key_env));
}

void check_key_transport(const std::string& base_url, bool allow_insecure_http) {
  if (allow_insecure_http || base_url.rfind("http://", 0) != 0 || is_loopback_url(base_url)) return;
  throw ConfigError("base_url", "'" + base_url +
                                    "' is plain http:// to a host that is not loopback: "
                                    "the API key would cross the network unencrypted; use https://, or "
                                    "set allow_insecure_http=true to send it anyway");
}

std::string unavailable_reason(const nlohmann::json& config) {
  const nlohmann::json defaults = llm_default_config();
  std::string base_url = string_or(config, "base_url", defaults["base_url"].get<std::string>());
  while (!base_url.empty() && base_url.back() == '/') base_url.pop_back();
  if (base_url != defaults["base_url"].get<std::string>()) return "";
  const std::string key_env = string_or(config, "api_key_env", defaults["api_key_env"].get<std::string>());
  if (find_api_key(key_env)) return "";
  return "no API key: set " + key_variables(key_env) + ", or --set llm.base_url=URL for a local server";
}

}  // namespace newscls::llm
