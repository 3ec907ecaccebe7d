// The llm client's pieces that need no server: retry policy, wire format, usage and cost,
// the response cache, API key lookup and the config (mirrored in configs/llm.json).
#include <cstdlib>
#include <filesystem>
#include <optional>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "llm/api_key.h"
#include "llm/chat_api.h"
#include "llm/llm.h"
#include "llm/response_cache.h"
#include "llm/retry_policy.h"
#include "llm/run_stats.h"
#include "llm/settings.h"
#include "newscls/core/atomic_file.h"
#include "newscls/core/config.h"
#include "newscls/core/error.h"
#include "config_table_checks.h"
#include "test_support.h"

namespace newscls::llm {
namespace {

// Sets (or, for nullptr, unsets) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    value ? ::setenv(name, value, 1) : ::unsetenv(name);
  }
  ~ScopedEnv() { old_ ? ::setenv(name_.c_str(), old_->c_str(), 1) : ::unsetenv(name_.c_str()); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

HttpResult status(long code, std::string body = "") {
  HttpResult r;
  r.status = code;
  r.body = std::move(body);
  return r;
}

TEST(LlmRetryPolicy, RetriesTransientFailuresOnly) {
  for (long code : {408L, 429L, 500L, 502L, 503L, 504L, 506L, 507L, 508L, 509L, 510L, 511L, 520L, 524L, 529L, 599L}) {
    EXPECT_EQ(classify(status(code)), Outcome::kRetryable) << code;
  }
  for (long code : {400L, 401L, 402L, 403L, 404L, 409L, 413L, 422L, 451L, 499L, 501L, 505L, 600L, 301L, 100L}) {
    EXPECT_EQ(classify(status(code)), Outcome::kFatal) << code;
  }
  EXPECT_EQ(classify(status(200)), Outcome::kSuccess);
  for (Transport t : {Transport::kTimeout, Transport::kDropped, Transport::kConnect}) {
    HttpResult r;
    r.transport = t;
    EXPECT_EQ(classify(r), Outcome::kRetryable);
  }
  HttpResult tls;
  tls.transport = Transport::kTls;
  EXPECT_EQ(classify(tls), Outcome::kFatal);
}

// The whole 4xx and 5xx range: only 408, 429 and the 5xx but 501 and 505 are retried.
TEST(LlmRetryPolicy, EveryStatusCodeFrom400To599) {
  int retried = 0;
  for (long code = 400; code <= 599; ++code) {
    const bool want = code == 408 || code == 429 || (code >= 500 && code != 501 && code != 505);
    EXPECT_EQ(classify(status(code)), want ? Outcome::kRetryable : Outcome::kFatal) << code;
    retried += want ? 1 : 0;
  }
  EXPECT_EQ(retried, 2 + 98);
}

TEST(LlmRetryPolicy, BackoffGrowsWithJitterAndHonoursRetryAfter) {
  EXPECT_DOUBLE_EQ(backoff_seconds(1, 0.5, 30, 0.0, -1, 120), 0.25);
  EXPECT_DOUBLE_EQ(backoff_seconds(3, 0.5, 30, 0.0, -1, 120), 1.0);
  EXPECT_LT(backoff_seconds(3, 0.5, 30, 0.999, -1, 120), 2.0);
  EXPECT_DOUBLE_EQ(backoff_seconds(20, 0.5, 30, 0.0, -1, 120), 15.0);
  EXPECT_DOUBLE_EQ(backoff_seconds(1, 0.5, 30, 0.0, 7, 120), 7.0);
  EXPECT_DOUBLE_EQ(backoff_seconds(1, 0.5, 30, 0.0, 999, 120), 120.0);
  // Jitter on top of Retry-After: never sooner, spread over up to half the backoff.
  EXPECT_GT(backoff_seconds(1, 0.5, 30, 0.999, 7, 120), 7.2);
  EXPECT_LT(backoff_seconds(1, 0.5, 30, 0.999, 7, 120), 7.25);
}

TEST(LlmRetryPolicy, ParsesRetryAfterSecondsAndDates) {
  EXPECT_DOUBLE_EQ(parse_retry_after("3", 0), 3.0);
  EXPECT_DOUBLE_EQ(parse_retry_after("0.5", 0), 0.5);
  EXPECT_DOUBLE_EQ(parse_retry_after("junk", 0), -1.0);
  // Sun, 06 Nov 1994 08:49:37 GMT is 784111777.
  EXPECT_DOUBLE_EQ(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", 784111770), 7.0);
  EXPECT_DOUBLE_EQ(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", 784111800), 0.0);
}

TEST(LlmRetryPolicy, FatalErrorsSayWhatToFix) {
  const FatalContext context{"http://x/chat/completions", "m", "NEWSCLS_LLM_API_KEY (or DEEPSEEK_API_KEY)",
                             "sk-secret"};
  const HttpError e401 = fatal_error(status(401, R"({"error":{"message":"bad key sk-secret"}})"), context);
  EXPECT_EQ(e401.status(), 401);
  const std::string what = e401.what();
  EXPECT_NE(what.find("set NEWSCLS_LLM_API_KEY"), std::string::npos) << what;
  EXPECT_EQ(what.find("sk-secret"), std::string::npos) << what;
  EXPECT_NE(what.find("bad key ***"), std::string::npos) << what;
  EXPECT_NE(std::string(fatal_error(status(402), context).what()).find("balance"), std::string::npos);
  EXPECT_NE(std::string(fatal_error(status(404), context).what()).find("base_url"), std::string::npos);
}

TEST(LlmChatApi, RequestBodyCarriesTheSettings) {
  RequestOptions options;
  options.model = "deepseek-chat";
  options.max_tokens = 16;
  options.thinking = "disabled";
  options.json_mode = true;
  options.extra_body = {{"seed", 3}};
  const auto body = nlohmann::json::parse(build_request_body(options, nlohmann::json::array()));
  EXPECT_EQ(body["model"], "deepseek-chat");
  EXPECT_EQ(body["temperature"], 0.0);
  EXPECT_EQ(body["max_tokens"], 16);
  EXPECT_EQ(body["thinking"]["type"], "disabled");
  EXPECT_EQ(body["response_format"]["type"], "json_object");
  EXPECT_EQ(body["seed"], 3);
  options.thinking = "omit";
  EXPECT_FALSE(nlohmann::json::parse(build_request_body(options, nlohmann::json::array())).contains("thinking"));
}

TEST(LlmChatApi, ReadsContentAndBothUsageStyles) {
  ChatReply reply;
  std::string why;
  ASSERT_TRUE(parse_chat_reply(R"({"choices":[{"message":{"content":"体育"}}],
      "usage":{"prompt_tokens":100,"completion_tokens":2,"prompt_cache_hit_tokens":64}})",
                               reply, why));
  EXPECT_EQ(reply.content, "体育");
  EXPECT_EQ(reply.usage.prompt_tokens, 100);
  EXPECT_EQ(reply.usage.completion_tokens, 2);
  EXPECT_EQ(reply.usage.cached_tokens, 64);
  ASSERT_TRUE(parse_chat_reply(R"({"choices":[{"message":{"content":null}}],
      "usage":{"prompt_tokens":10,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":8}}})",
                               reply, why));
  EXPECT_EQ(reply.content, "");
  EXPECT_EQ(reply.usage.cached_tokens, 8);
  EXPECT_FALSE(parse_chat_reply("{\"choices\": [{\"message\": {\"content\": \"", reply, why));
  EXPECT_FALSE(parse_chat_reply(R"({"choices":[]})", reply, why));
  EXPECT_FALSE(parse_chat_reply("[]", reply, why));
}

TEST(LlmRunStats, CostAndPercentiles) {
  Usage u;
  u.prompt_tokens = 1000000;
  u.cached_tokens = 400000;
  u.completion_tokens = 500000;
  EXPECT_NEAR(cost_usd(u, {0.28, 0.028, 0.42}), 0.6 * 0.28 + 0.4 * 0.028 + 0.5 * 0.42, 1e-12);
  std::vector<double> values;
  for (int i = 1; i <= 100; ++i) values.push_back(i);
  EXPECT_DOUBLE_EQ(percentile(values, 50), 50);
  EXPECT_DOUBLE_EQ(percentile(values, 95), 95);
  EXPECT_DOUBLE_EQ(percentile(values, 99), 99);
  EXPECT_DOUBLE_EQ(percentile({}, 50), 0);
}

// Every option in the body takes part in the key, not only model, prompt and title.
TEST(LlmResponseCache, KeyCoversTheWholeRequest) {
  RequestOptions options;
  options.model = "m";
  options.max_tokens = 16;
  const nlohmann::json messages = {{{"role", "user"}, {"content", "标题"}}};
  const std::string key = cache_key("https://a", build_request_body(options, messages));
  EXPECT_EQ(key, cache_key("https://a", build_request_body(options, messages)));
  EXPECT_EQ(key.size(), 64u);
  EXPECT_NE(key, cache_key("https://b", build_request_body(options, messages)));
  const auto differs = [&](auto change) {
    RequestOptions other = options;
    change(other);
    return cache_key("https://a", build_request_body(other, messages)) != key;
  };
  EXPECT_TRUE(differs([](RequestOptions& o) { o.model = "m2"; }));
  EXPECT_TRUE(differs([](RequestOptions& o) { o.temperature = 0.7; }));
  EXPECT_TRUE(differs([](RequestOptions& o) { o.max_tokens = 17; }));
  EXPECT_TRUE(differs([](RequestOptions& o) { o.thinking = "enabled"; }));
  EXPECT_TRUE(differs([](RequestOptions& o) { o.json_mode = true; }));
  EXPECT_TRUE(differs([](RequestOptions& o) { o.extra_body = {{"seed", 1}}; }));
  const nlohmann::json other_title = {{{"role", "user"}, {"content", "标题2"}}};
  EXPECT_NE(key, cache_key("https://a", build_request_body(options, other_title)));
}

TEST(LlmResponseCache, PersistsAcrossOpensAndKeysDiffer) {
  const std::string path = newscls::testing::scratch_dir() + "/sub/cache.sqlite";
  const std::string key = cache_key("https://a", R"({"model":"m"})");
  EXPECT_NE(key, cache_key("https://a", R"({"model":"m2"})"));
  {
    ResponseCache cache(path);
    EXPECT_FALSE(cache.get(key).has_value());
    ChatReply reply;
    reply.content = "体育";
    reply.usage.prompt_tokens = 100;
    cache.put(key, reply);
  }
  ResponseCache again(path);
  auto hit = again.get(key);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->content, "体育");
  EXPECT_EQ(hit->usage.prompt_tokens, 100);
}

TEST(LlmResponseCache, RefusesAFileThatIsNotACache) {
  const std::string path =
      newscls::testing::write_text(newscls::testing::scratch_dir() + "/x.sqlite", std::string(4096, 'x'));
  EXPECT_THROW(ResponseCache cache(path), IoError);
}

TEST(LlmResponseCache, ACacheLockedByAnotherProcessIsSaidToBeInUse) {
  const std::string path = newscls::testing::scratch_dir() + "/locked.sqlite";
  { ResponseCache create(path); }
  sqlite3* other = nullptr;  // another connection takes the lock as a writing process does
  ASSERT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  try {
    ResponseCache cache(path, 50);
    ADD_FAILURE() << "a locked cache was opened";
  } catch (const IoError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("is locked: another process"), std::string::npos) << what;
    EXPECT_EQ(what.find("is this a newscls cache file"), std::string::npos) << what;
  }
  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);
}

TEST(LlmApiKey, LoopbackNeedsNoKeyOthersNameTheVariable) {
  ::unsetenv("NEWSCLS_TEST_NO_SUCH_KEY");
  EXPECT_TRUE(is_loopback_url("http://127.0.0.1:8080"));
  EXPECT_TRUE(is_loopback_url("http://localhost:1/v1"));
  EXPECT_TRUE(is_loopback_url("http://[::1]:9"));
  EXPECT_FALSE(is_loopback_url("https://api.deepseek.com"));
  EXPECT_FALSE(resolve_api_key("NEWSCLS_TEST_NO_SUCH_KEY", "http://127.0.0.1:1").value.empty());
  try {
    resolve_api_key("NEWSCLS_TEST_NO_SUCH_KEY", "https://api.deepseek.com");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("NEWSCLS_TEST_NO_SUCH_KEY"), std::string::npos);
  }
  ::setenv("NEWSCLS_TEST_SOME_KEY", "k1", 1);
  EXPECT_EQ(resolve_api_key("NEWSCLS_TEST_SOME_KEY", "https://x").source, "NEWSCLS_TEST_SOME_KEY");
  ::unsetenv("NEWSCLS_TEST_SOME_KEY");
}

TEST(LlmApiKey, LoopbackMeansTheLoopbackNetworkOnly) {
  EXPECT_TRUE(is_loopback_url("http://127.255.0.9:80/v1"));
  EXPECT_TRUE(is_loopback_url("http://LOCALHOST:8080"));
  EXPECT_FALSE(is_loopback_url("http://127.example.com/v1"));
  EXPECT_FALSE(is_loopback_url("http://128.0.0.1/v1"));
  EXPECT_FALSE(is_loopback_url("http://10.0.0.5:8000/v1"));
  EXPECT_FALSE(is_loopback_url("http://[::2]:9"));
  EXPECT_FALSE(is_loopback_url("not a url"));
}

// The key is not sent in clear text over the network unless the user says so.
TEST(LlmApiKey, PlainHttpOnlyToLoopbackUnlessAllowed) {
  for (const char* url : {"http://127.0.0.1:9/v1", "http://localhost:8080/v1", "http://[::1]:9", "https://10.0.0.5/v1",
                          "https://api.openai.com/v1"}) {
    EXPECT_NO_THROW(check_key_transport(url, false)) << url;
  }
  for (const char* url : {"http://10.0.0.5:8000/v1", "http://api.deepseek.com", "http://127.example.com"}) {
    try {
      check_key_transport(url, false);
      ADD_FAILURE() << url << ": expected ConfigError";
    } catch (const ConfigError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("base_url"), std::string::npos) << what;
      EXPECT_NE(what.find("allow_insecure_http=true"), std::string::npos) << what;
      EXPECT_NE(what.find(url), std::string::npos) << what;
    }
    EXPECT_NO_THROW(check_key_transport(url, true)) << url;
  }
  EXPECT_THROW(parse_settings({{"base_url", "http://10.0.0.5:8000/v1"}}), ConfigError);
  EXPECT_NO_THROW(parse_settings({{"base_url", "http://10.0.0.5:8000/v1"}, {"allow_insecure_http", true}}));
  EXPECT_NO_THROW(parse_settings({{"base_url", "http://127.0.0.1:8000/v1"}}));
}

TEST(LlmApiKey, UnavailableReasonFindsTheKeyAsTheClientDoes) {
  ScopedEnv primary("NEWSCLS_LLM_API_KEY", nullptr);
  ScopedEnv fallback("DEEPSEEK_API_KEY", nullptr);
  ScopedEnv custom("NEWSCLS_TEST_CUSTOM_KEY", nullptr);
  const std::string why = unavailable_reason(nlohmann::json::object());
  EXPECT_NE(why.find("NEWSCLS_LLM_API_KEY (or DEEPSEEK_API_KEY)"), std::string::npos) << why;
  EXPECT_NE(why.find("base_url"), std::string::npos) << why;
  EXPECT_FALSE(unavailable_reason(default_config()).empty());
  EXPECT_FALSE(unavailable_reason({{"base_url", "https://api.deepseek.com/"}}).empty());
  // Another endpoint may need no key (a local server): the stage runs.
  EXPECT_EQ(unavailable_reason({{"base_url", "http://127.0.0.1:8080/v1"}}), "");
  EXPECT_EQ(unavailable_reason({{"base_url", "https://api.openai.com/v1"}}), "");
  {
    ScopedEnv set("DEEPSEEK_API_KEY", "sk-x");
    EXPECT_EQ(unavailable_reason(default_config()), "");
    // A custom variable replaces the default ones, as in resolve_api_key.
    const std::string custom_why = unavailable_reason({{"api_key_env", "NEWSCLS_TEST_CUSTOM_KEY"}});
    EXPECT_NE(custom_why.find("NEWSCLS_TEST_CUSTOM_KEY"), std::string::npos) << custom_why;
    EXPECT_EQ(custom_why.find("DEEPSEEK_API_KEY"), std::string::npos) << custom_why;
  }
  {
    ScopedEnv set("NEWSCLS_LLM_API_KEY", "");  // empty counts as unset for the client too
    EXPECT_FALSE(unavailable_reason(nlohmann::json::object()).empty());
  }
  ScopedEnv set_custom("NEWSCLS_TEST_CUSTOM_KEY", "sk-y");
  EXPECT_EQ(unavailable_reason({{"api_key_env", "NEWSCLS_TEST_CUSTOM_KEY"}}), "");
  EXPECT_EQ(resolve_api_key("NEWSCLS_TEST_CUSTOM_KEY", "https://api.deepseek.com").value, "sk-y");
}

TEST(LlmConfigTest, EachKeyOfTheTableHolds) { newscls::testing::expect_table_holds(settings_table(), parse_settings); }

TEST(LlmConfigTest, UnknownKeysAreRefusedLikeEveryFamily) {
  try {
    parse_settings({{"no_such_key", 1}});
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown key for llm"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no_such_key"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(parse_settings({{"_comment", "documentation keys are ignored"}}));
  EXPECT_THROW(parse_settings({{"max_tokens", "many"}}), ConfigError);
  EXPECT_EQ(effective_llm_config({{"model", "x"}})["model"], "x");
  EXPECT_EQ(effective_llm_config({{"model", "x"}})["max_tokens"], default_config()["max_tokens"]);
}

// thinking "auto": DeepSeek's field only to DeepSeek's hosts; the README's OpenAI example
// must send no unknown field.
TEST(LlmConfigTest, ThinkingAutoSendsTheFieldOnlyToDeepSeek) {
  EXPECT_EQ(resolve_thinking("auto", "https://api.deepseek.com"), "disabled");
  EXPECT_EQ(resolve_thinking("auto", "https://API.DeepSeek.com/v1"), "disabled");
  EXPECT_EQ(resolve_thinking("auto", "https://deepseek.com"), "disabled");
  EXPECT_EQ(resolve_thinking("auto", "https://api.openai.com/v1"), "omit");
  EXPECT_EQ(resolve_thinking("auto", "https://notdeepseek.com"), "omit");
  EXPECT_EQ(resolve_thinking("auto", "https://api.deepseek.com.evil.example"), "omit");
  EXPECT_EQ(resolve_thinking("auto", "http://127.0.0.1:8080/v1"), "omit");
  for (const char* forced : {"enabled", "disabled", "omit"}) {
    EXPECT_EQ(resolve_thinking(forced, "https://api.openai.com/v1"), forced);
    EXPECT_EQ(resolve_thinking(forced, "https://api.deepseek.com"), forced);
  }
  EXPECT_EQ(default_config()["thinking"], "auto");
  const Settings openai = parse_settings({{"base_url", "https://api.openai.com/v1"}, {"model", "gpt-4o-mini"}});
  EXPECT_FALSE(nlohmann::json::parse(build_request_body(openai.request, nlohmann::json::array())).contains("thinking"));
  const Settings deepseek = parse_settings(nlohmann::json::object());
  EXPECT_EQ(nlohmann::json::parse(build_request_body(deepseek.request, nlohmann::json::array()))["thinking"]["type"],
            "disabled");
  const Settings forced = parse_settings({{"base_url", "https://api.openai.com/v1"}, {"thinking", "enabled"}});
  EXPECT_EQ(nlohmann::json::parse(build_request_body(forced.request, nlohmann::json::array()))["thinking"]["type"],
            "enabled");
}

TEST(LlmConfigTest, DefaultsValidate) {
  const Settings c = parse_settings(default_config());
  EXPECT_EQ(c.chat_url(), "https://api.deepseek.com/chat/completions");
  EXPECT_EQ(c.api_key_env, "NEWSCLS_LLM_API_KEY");
  EXPECT_THROW(parse_settings({{"base_url", "ftp://x"}}), ConfigError);
  EXPECT_THROW(parse_settings({{"concurrency", 0}}), ConfigError);
  EXPECT_THROW(parse_settings({{"thinking", "maybe"}}), ConfigError);
  EXPECT_EQ(parse_settings({{"base_url", "http://127.0.0.1:9/v1/"}}).chat_url(),
            "http://127.0.0.1:9/v1/chat/completions");
}

}  // namespace
}  // namespace newscls::llm
