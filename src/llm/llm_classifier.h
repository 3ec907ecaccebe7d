// The llm family: zero-shot (or few-shot) classification by a chat model.
//
// train() fits nothing: it fixes the prompt (label names, template version, optional
// few-shot examples drawn from ctx.train with the seed). predict_batch() answers each
// title from the response cache or asks the endpoint, up to `concurrency` requests in
// flight; a reply that maps to no class, or a title whose retries ran out, is predicted
// kUnknownLabel. The API key is read from the environment when the first request is due
// and kept only in memory.
//
//   LlmClassifier model; model.configure(cfg); model.train(ctx);
//   auto predictions = model.predict_batch(titles);
//   nlohmann::json stats = model.run_stats();   // requests, retries, cache hits, cost...
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "llm/http_engine.h"
#include "llm/prompt.h"
#include "llm/response_cache.h"
#include "llm/run_stats.h"
#include "llm/settings.h"
#include "newscls/core/classifier.h"

namespace newscls::llm {

class LlmClassifier : public Classifier {
 public:
  std::string family() const override { return "llm"; }
  void configure(const nlohmann::json& config) override;
  nlohmann::json config() const override { return config_json_; }
  nlohmann::json train(const TrainContext& ctx) override;
  std::vector<Prediction> predict_batch(const std::vector<std::string>& titles) override;
  std::size_t preferred_batch_size() const override;
  void tolerate_outages() override { tolerate_outages_ = true; }
  double endpoint_paused_s() const override;
  void save(BundleWriter& bundle) const override;
  void load(const Bundle& bundle) override;
  nlohmann::json run_stats() const override;
  void reset_run_stats() override;
  std::size_t eval_limit() const override { return static_cast<std::size_t>(config_.limit); }

 private:
  // Requests to send, one per distinct uncached title, with the rows that want it.
  struct Pending {
    std::string key;
    std::string body;
    std::vector<std::size_t> rows;
    std::string title;  // the first row's, for warnings
  };

  void adopt_prompt(Prompt prompt);
  const Prompt& prompt() const;
  ResponseCache* cache();
  RequestEngine& engine();
  Prediction prediction_for(const std::string& content);
  // answered: whether a title of this call was answered already (from the cache);
  // max_retries >= 0 replaces the config's (a probe).
  void ask(const std::vector<Pending>& pending, std::vector<Prediction>& out, bool answered, int max_retries = -1);
  void fail(const Pending& pending, std::vector<Prediction>& out);
  // Tolerating outages (serve, a cascade): after kFailedInARow titles in a row with no answer
  // (a reply or a refusal breaks the row), the endpoint is taken for down and asked nothing for
  // backoff_max_s, its titles failing at once, not after every retry; then one title, asked
  // once, tells whether it is back (no answer: paused again).
  bool endpoint_paused() const;
  void pause_if_down(const std::string& why);
  void endpoint_answered();

  Settings config_;
  nlohmann::json config_json_ = nlohmann::json::object();
  std::optional<Prompt> prompt_;
  std::unique_ptr<ResponseCache> cache_;
  bool cache_opened_ = false;
  std::unique_ptr<RequestEngine> engine_;
  FatalContext fatal_context_;
  RunStats stats_;
  EngineCounters counters_;
  bool answered_any_ = false;  // a 400 before any answer is the config's fault, not a title's
  bool tolerate_outages_ = false;
  std::size_t failed_in_a_row_ = 0;
  bool probe_due_ = false;
  std::chrono::steady_clock::time_point paused_until_{};
};

}  // namespace newscls::llm
