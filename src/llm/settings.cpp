#include "llm/settings.h"

#include "llm/api_key.h"
#include "newscls/core/config.h"
#include "newscls/core/error.h"

namespace newscls::llm {
namespace {

std::string checked_base_url(std::string url) {
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

bool is_deepseek_host(const std::string& host) {
  const std::string domain = "deepseek.com";
  return host == domain || (host.size() > domain.size() &&
                            host.compare(host.size() - domain.size() - 1, std::string::npos, "." + domain) == 0);
}

// A text key that must not be empty.
template <class... Path>
Field<Settings> non_empty(const char* key, Path... path) {
  Field<Settings> f = field(path...);
  return {[key, store = f.store](Settings& s, const nlohmann::json& v) {
            if (v.get<std::string>().empty()) throw ConfigError(key, "must not be empty");
            store(s, v);
          },
          f.load};
}

}  // namespace

const ConfigTable<Settings>& settings_table() {
  using K = ConfigKey;
  using R = RequestOptions;
  static const ConfigTable<Settings> table(
      "llm",
      {
          {K::text("base_url", "https://api.deepseek.com",
                   "OpenAI-compatible endpoint; requests go to {base_url}/chat/completions. DeepSeek by default; e.g. "
                   "https://api.openai.com/v1, http://127.0.0.1:8000/v1 (vLLM), http://127.0.0.1:8080/v1 (llama.cpp "
                   "server), http://127.0.0.1:11434/v1 (Ollama). A loopback URL needs no API key."),
           {[](Settings& s, const nlohmann::json& v) { s.base_url = checked_base_url(v.get<std::string>()); },
            [](const Settings& s) { return nlohmann::json(s.base_url); }}},
          {K::text("model", "deepseek-chat", "Model name sent in each request."),
           non_empty("model", &Settings::request, &R::model)},
          {K::text("api_key_env", kDefaultKeyEnv,
                   "Name of the environment variable holding the API key (the key itself is never read from a config, "
                   "logged, or written anywhere). For the default NEWSCLS_LLM_API_KEY, DEEPSEEK_API_KEY is the "
                   "fallback."),
           non_empty("api_key_env", &Settings::api_key_env)},
          {K::boolean("allow_insecure_http", false,
                      "The API key is sent over plain http:// only to a loopback host (localhost, 127.0.0.0/8, [::1]); "
                      "any other http:// base_url is a config error unless this is true (the key would cross the "
                      "network unencrypted). https:// is always allowed."),
           field(&Settings::allow_insecure_http)},
          {K::number("temperature", 0.0, 0, 2,
                     "Sampling temperature; 0 makes answers repeatable, which the response cache relies on."),
           field(&Settings::request, &R::temperature)},
          {K::integer("max_tokens", 16, 1, 32768, "Reply length limit; a label needs only a few tokens."),
           field(&Settings::request, &R::max_tokens)},
          {K::choice(
               "thinking", "auto", {"auto", "disabled", "enabled", "omit"},
               "DeepSeek's {\"thinking\": {\"type\": ...}} request field. \"auto\": sent as \"disabled\" only when "
               "the base_url host is deepseek.com or a subdomain of it, never to other providers (OpenAI and "
               "others reject unknown fields); \"disabled\" or \"enabled\": always sent with that type; \"omit\": "
               "never sent."),
           field(&Settings::thinking)},
          {K::boolean("json_mode", false,
                      "Ask for {\"label\": \"...\"} with response_format json_object and parse the label field."),
           field(&Settings::request, &R::json_mode)},
          {K::object("extra_body", nlohmann::json::object(),
                     "JSON object merged into every request body last, e.g. {\"chat_template_kwargs\": "
                     "{\"enable_thinking\": false}} for vLLM with Qwen3."),
           {[](Settings& s, const nlohmann::json& v) {
              if (!v.is_object()) throw ConfigError("extra_body", "must be a JSON object");
              s.request.extra_body = v;
            },
            [](const Settings& s) { return s.request.extra_body; }}},
          {K::integer("concurrency", 16, 1, 1024, "Requests in flight at once."), field(&Settings::concurrency)},
          {K::number("rpm", 0.0, 0, 1e7, "Most requests started per minute, retries included; 0 for no limit."),
           field(&Settings::rpm)},
          {K::number("timeout_s", 30.0, 0.01, 3600, "Per-request timeout in seconds; a timed-out request is retried."),
           field(&Settings::timeout_s)},
          {K::integer(
               "max_retries", 5, 0, 100,
               "Retries per title on 408, 429, every 5xx except 501 and 505, timeouts, dropped connections and "
               "malformed replies; then the title is predicted unknown (and counted in failed_titles) and is not "
               "cached."),
           field(&Settings::max_retries)},
          {K::number(
               "backoff_base_s", 0.5, 0, 3600,
               "First retry waits between half and all of this; each further retry doubles it (exponential backoff "
               "with jitter)."),
           field(&Settings::backoff_base_s)},
          {K::number(
               "backoff_max_s", 30.0, 0, 3600,
               "Upper bound of one backoff wait; also how long serve and a cascade ask nothing of an endpoint that "
               "left 25 titles in a row unanswered (0: never paused)."),
           field(&Settings::backoff_max_s)},
          {K::number("retry_after_max_s", 120.0, 0, 86400,
                     "A server's Retry-After is honoured as a lower bound on the wait, up to this many seconds."),
           field(&Settings::retry_after_max_s)},
          {K::integer("few_shot", 0, 0, 100,
                      "K example titles per class drawn from train with --seed and stored in the bundle; 0 for "
                      "zero-shot."),
           field(&Settings::few_shot)},
          {K::integer(
               "limit", 0, 0, 1000000000,
               "Evaluate on a seeded, class-stratified sample of this many titles (every title costs money); 0 for "
               "the whole split."),
           field(&Settings::limit)},
          {K::text(
               "cache_path", "",
               "SQLite response cache; \"\" means $XDG_CACHE_HOME/newscls/llm-cache.sqlite (else "
               "$HOME/.cache/newscls/llm-cache.sqlite); \"off\" disables it; a relative path is stored in the bundle "
               "as the absolute path it named at training. Keyed by a SHA-256 of base_url and the whole request body "
               "as sent (model, messages with the prompt, few-shot turns and title, temperature, max_tokens, "
               "thinking, response_format, extra_body): changing any of them asks again. Rows written by versions "
               "before this key was introduced no longer match."),
           field(&Settings::cache_path)},
          {K::number(
               "price_input_per_m", 0.28, 0, 1e6,
               "USD per million prompt tokens not served from the provider's prompt cache (DeepSeek deepseek-chat "
               "list price at the time of writing; check your provider)."),
           field(&Settings::prices, &Prices::input_per_m)},
          {K::number("price_cached_input_per_m", 0.028, 0, 1e6,
                     "USD per million prompt tokens served from the provider's prompt cache."),
           field(&Settings::prices, &Prices::cached_input_per_m)},
          {K::number("price_output_per_m", 0.42, 0, 1e6, "USD per million completion tokens."),
           field(&Settings::prices, &Prices::output_per_m)},
      });
  return table;
}

nlohmann::json llm_default_config() { return settings_table().defaults(); }

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

Settings parse_settings(const nlohmann::json& given) {
  Settings c = settings_table().parse(effective_llm_config(given));
  check_key_transport(c.base_url, c.allow_insecure_http);
  c.request.thinking = resolve_thinking(c.thinking, c.base_url);
  return c;
}

}  // namespace newscls::llm
