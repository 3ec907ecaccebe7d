// Where the API key comes from: an environment variable, never the config or a bundle;
// and where it may go: never in clear text over the network.
//
// The variable named by api_key_env; when that is the default NEWSCLS_LLM_API_KEY and it is
// unset, DEEPSEEK_API_KEY. A loopback base_url (localhost, 127.0.0.0/8, ::1) needs no key:
// local servers (llama.cpp, vLLM, the test server) get a dummy one. A key is sent over plain
// http:// only to a loopback host, unless allow_insecure_http is set.
//
//   check_key_transport(base_url, allow_insecure_http);   // ConfigError naming base_url
//   ApiKey key = resolve_api_key("NEWSCLS_LLM_API_KEY", "https://api.deepseek.com");
//   headers.push_back("Authorization: Bearer " + key.value);
//   if (std::string why = unavailable_reason(cfg); !why.empty()) skip the stage: why
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace newscls::llm {

constexpr const char* kDefaultKeyEnv = "NEWSCLS_LLM_API_KEY";
constexpr const char* kFallbackKeyEnv = "DEEPSEEK_API_KEY";

struct ApiKey {
  std::string value;
  std::string source;  // the variable it came from, for messages ("" for the dummy key)
};

// The host of url as libcurl parses it ("" when it does not parse), lowercase.
std::string url_host(const std::string& url);
bool is_loopback_url(const std::string& url);
// The key from key_env (or the fallback), without the loopback dummy; nullopt when unset.
std::optional<ApiKey> find_api_key(const std::string& key_env);
// Throws ConfigError("api_key_env", ...) naming the variable(s) to set.
ApiKey resolve_api_key(const std::string& key_env, const std::string& base_url);
// "NEWSCLS_LLM_API_KEY (or DEEPSEEK_API_KEY)" for the default, else key_env.
std::string key_variables(const std::string& key_env);
// Throws ConfigError("base_url", ...) for http:// to a non-loopback host unless allowed.
void check_key_transport(const std::string& base_url, bool allow_insecure_http);

// "" when the llm stage can run with this effective config (missing keys take their
// defaults): an API key is found as the client finds it, or base_url is not the default
// (a local server may need no key). Else one sentence saying why not and how to fix it.
std::string unavailable_reason(const nlohmann::json& config);

}  // namespace newscls::llm
