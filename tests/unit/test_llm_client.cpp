// The llm client's pieces that need no server: retry policy, wire format, usage and cost,
// the response cache, API key lookup and the config (mirrored in configs/llm.json).
#include <cstdlib>
#include <filesystem>

#include <gtest/gtest.h>

#include "llm/api_key.h"
#include "llm/chat_api.h"
#include "llm/llm.h"
#include "llm/llm_config.h"
#include "llm/response_cache.h"
#include "llm/retry_policy.h"
#include "llm/run_stats.h"
#include "newscls/atomic_file.h"
#include "newscls/config.h"
#include "newscls/error.h"
#include "test_support.h"

namespace newscls::llm {
namespace {

HttpResult status(long code, std::string body = "") {
  HttpResult r;
  r.status = code;
  r.body = std::move(body);
  return r;
}

TEST(LlmRetryPolicy, RetriesTransientFailuresOnly) {
  for (long code : {408L, 429L, 500L, 502L, 503L, 504L}) EXPECT_EQ(classify(status(code)), Outcome::kRetryable) << code;
  for (long code : {400L, 401L, 402L, 403L, 404L, 422L}) EXPECT_EQ(classify(status(code)), Outcome::kFatal) << code;
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

TEST(LlmRetryPolicy, BackoffGrowsWithJitterAndHonoursRetryAfter) {
  EXPECT_DOUBLE_EQ(backoff_seconds(1, 0.5, 30, 0.0, -1, 120), 0.25);
  EXPECT_DOUBLE_EQ(backoff_seconds(3, 0.5, 30, 0.0, -1, 120), 1.0);
  EXPECT_LT(backoff_seconds(3, 0.5, 30, 0.999, -1, 120), 2.0);
  EXPECT_DOUBLE_EQ(backoff_seconds(20, 0.5, 30, 0.0, -1, 120), 15.0);
  EXPECT_DOUBLE_EQ(backoff_seconds(1, 0.5, 30, 0.0, 7, 120), 7.0);
  EXPECT_DOUBLE_EQ(backoff_seconds(1, 0.5, 30, 0.0, 999, 120), 120.0);
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
      "usage":{"prompt_tokens":100,"completion_tokens":2,"prompt_cache_hit_tokens":64}})", reply, why));
  EXPECT_EQ(reply.content, "体育");
  EXPECT_EQ(reply.usage.prompt_tokens, 100);
  EXPECT_EQ(reply.usage.completion_tokens, 2);
  EXPECT_EQ(reply.usage.cached_tokens, 64);
  ASSERT_TRUE(parse_chat_reply(R"({"choices":[{"message":{"content":null}}],
      "usage":{"prompt_tokens":10,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":8}}})", reply, why));
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

TEST(LlmResponseCache, PersistsAcrossOpensAndKeysDiffer) {
  const std::string path = newscls::testing::scratch_dir() + "/sub/cache.sqlite";
  const std::string key = cache_key("https://a", "m", "fp", "标题");
  EXPECT_NE(key, cache_key("https://a", "m2", "fp", "标题"));
  EXPECT_NE(key, cache_key("https://a", "m", "fp2", "标题"));
  EXPECT_NE(key, cache_key("https://b", "m", "fp", "标题"));
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
  const std::string path = newscls::testing::write_text(newscls::testing::scratch_dir() + "/x.sqlite",
                                                        std::string(4096, 'x'));
  EXPECT_THROW(ResponseCache cache(path), IoError);
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

TEST(LlmConfigTest, DefaultsMirrorConfigsLlmJsonAndValidate) {
  const auto file = nlohmann::json::parse(read_file(newscls::testing::source_dir() + "/configs/llm.json"));
  EXPECT_EQ(strip_docs(file), default_config());
  const nlohmann::json defaults = default_config();
  for (auto it = defaults.begin(); it != defaults.end(); ++it) {
    EXPECT_TRUE(file["_doc"].contains(it.key())) << it.key() << " undocumented";
  }
  const LlmConfig c = LlmConfig::from_json(default_config());
  EXPECT_EQ(c.chat_url(), "https://api.deepseek.com/chat/completions");
  EXPECT_EQ(c.api_key_env, "NEWSCLS_LLM_API_KEY");
  EXPECT_THROW(LlmConfig::from_json({{"base_url", "ftp://x"}}), ConfigError);
  EXPECT_THROW(LlmConfig::from_json({{"concurrency", 0}}), ConfigError);
  EXPECT_THROW(LlmConfig::from_json({{"thinking", "maybe"}}), ConfigError);
  EXPECT_THROW(LlmConfig::from_json({{"no_such_key", 1}}), ConfigError);
  EXPECT_EQ(LlmConfig::from_json({{"base_url", "http://127.0.0.1:9/v1/"}}).chat_url(),
            "http://127.0.0.1:9/v1/chat/completions");
}

}  // namespace
}  // namespace newscls::llm
