// Counters and histograms for GET /metrics, in Prometheus text format (version 0.0.4):
// requests by path and status, request latency by path, titles and batch sizes by model,
// the LLM requests of models that send them, and the queue depth of each model (read when
// rendered). Thread-safe.
//
//   ServeMetrics m;
//   m.record_request("/v1/classify", 200, 0.004);
//   m.record_batch("fasttext", 64);
//   std::string text = m.render({{"fasttext", 3, false}});
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace newscls::serve {

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double value);
  // _bucket, _sum and _count lines; labels is "" or `key="value"` pairs joined by commas.
  void render(std::string& out, const std::string& name, const std::string& labels) const;

 private:
  std::vector<double> bounds_;
  std::vector<std::uint64_t> counts_;  // one per bound, not cumulative
  std::uint64_t count_ = 0;
  double sum_ = 0;
};

// What /metrics reads of a model served now, when it renders.
struct ServedState {
  std::string model;
  std::size_t queue_depth = 0;   // requests waiting for a batch
  bool endpoint_paused = false;  // its LLM endpoint is paused (ServedModel::endpoint_paused)
};

class ServeMetrics {
 public:
  // path is one of the API's paths; anything else is counted as "other".
  void record_request(const std::string& path, int status, double seconds);
  void record_batch(const std::string& model, std::size_t titles);
  void record_reload(bool ok);
  // Adds a batch's run_stats (a classifier's counts since its last reset): requests_sent,
  // retries, cache_hits, failed_titles, unknown_replies and cost_usd, those it holds.
  void record_requests(const std::string& model, const nlohmann::json& run_stats);
  // The counters, and the gauges of the models served now (a pause shown for those that send
  // requests).
  std::string render(const std::vector<ServedState>& served) const;

 private:
  void render_requests(std::string& out) const;
  void render_models(std::string& out) const;
  void render_requests_sent(std::string& out) const;

  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, std::uint64_t> requests_;
  std::map<std::string, Histogram> latency_;
  std::map<std::string, std::uint64_t> titles_;
  std::map<std::string, Histogram> batch_sizes_;
  std::uint64_t reloads_ok_ = 0, reloads_failed_ = 0;
  std::map<std::string, std::map<std::string, double>> llm_;  // model -> run_stats key -> total
};

// A label value escaped for the text format (backslash, quote, newline).
std::string prometheus_escape(const std::string& value);

}  // namespace newscls::serve
