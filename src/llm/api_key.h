// Where the API key comes from: an environment variable, never the config or a bundle.
//
// The variable named by api_key_env; when that is the default NEWSCLS_LLM_API_KEY and it is
// unset, DEEPSEEK_API_KEY. A loopback base_url (localhost, 127.0.0.0/8, ::1) needs no key:
// local servers (llama.cpp, vLLM, the test server) get a dummy one.
//
//   ApiKey key = resolve_api_key("NEWSCLS_LLM_API_KEY", "https://api.deepseek.com");
//   headers.push_back("Authorization: Bearer " + key.value);
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace newscls::llm {

constexpr const char* kDefaultKeyEnv = "NEWSCLS_LLM_API_KEY";
constexpr const char* kFallbackKeyEnv = "DEEPSEEK_API_KEY";

struct ApiKey {
  std::string value;
  std::string source;   // the variable it came from, for messages ("" for the dummy key)
};

bool is_loopback_url(const std::string& url);
// Throws ConfigError("api_key_env", ...) naming the variable(s) to set.
ApiKey resolve_api_key(const std::string& key_env, const std::string& base_url);
// "NEWSCLS_LLM_API_KEY (or DEEPSEEK_API_KEY)" for the default, else key_env.
std::string key_variables(const std::string& key_env);
// Empty when the client would find a key for this effective config; else why not.
std::string unavailable_reason(const nlohmann::json& config);

}  // namespace newscls::llm
