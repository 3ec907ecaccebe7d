#include "serve/metrics.h"

#include <algorithm>
#include <charconv>

namespace newscls::serve {
namespace {

const std::vector<double>& latency_bounds() {
  static const std::vector<double> bounds = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                             0.1,    0.25,  0.5,    1,     2.5,  5,     10};
  return bounds;
}

const std::vector<double>& batch_bounds() {
  static const std::vector<double> bounds = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
  return bounds;
}

std::string known_path(const std::string& path) {
  for (const char* p : {"/v1/classify", "/v1/models", "/healthz", "/metrics"}) {
    if (path == p) return path;
  }
  return "other";
}

// Shortest text that reads back as v: 0.005, not 0.0050000000000000001.
std::string number(double v) {
  char buf[32];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

void header(std::string& out, const char* name, const char* type, const char* help) {
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

}  // namespace

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size(), 0) {}

void Histogram::observe(double value) {
  const auto it = std::lower_bound(bounds_.begin(), bounds_.end(), value);
  if (it != bounds_.end()) ++counts_[static_cast<std::size_t>(it - bounds_.begin())];
  ++count_;
  sum_ += value;
}

void Histogram::render(std::string& out, const std::string& name, const std::string& labels) const {
  const std::string sep = labels.empty() ? "" : ",";
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    out += name + "_bucket{" + labels + sep + "le=\"" + number(bounds_[i]) + "\"} " + std::to_string(cumulative) + "\n";
  }
  out += name + "_bucket{" + labels + sep + "le=\"+Inf\"} " + std::to_string(count_) + "\n";
  const std::string braces = labels.empty() ? "" : "{" + labels + "}";
  out += name + "_sum" + braces + " " + number(sum_) + "\n";
  out += name + "_count" + braces + " " + std::to_string(count_) + "\n";
}

void ServeMetrics::record_request(const std::string& path, int status, double seconds) {
  const std::string p = known_path(path);
  std::lock_guard<std::mutex> lock(mutex_);
  ++requests_[{p, status}];
  latency_.try_emplace(p, latency_bounds()).first->second.observe(seconds);
}

void ServeMetrics::record_batch(const std::string& model, std::size_t titles) {
  std::lock_guard<std::mutex> lock(mutex_);
  titles_[model] += titles;
  batch_sizes_.try_emplace(model, batch_bounds()).first->second.observe(static_cast<double>(titles));
}

void ServeMetrics::record_reload(bool ok) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++(ok ? reloads_ok_ : reloads_failed_);
}

// The run_stats counts /metrics adds up, with their metric names and help.
struct RequestCounter {
  const char* key;
  const char* name;
  const char* help;
};
// kRequestCounts (request_stats.h), each with its metric, and the cost.
constexpr RequestCounter kRequestCounters[] = {
    {"requests_sent", "newscls_llm_requests_total", "LLM API requests sent (retries included), by model."},
    {"retries", "newscls_llm_retries_total", "LLM requests sent again after a failure, by model."},
    {"cache_hits", "newscls_llm_cache_hits_total", "Titles answered from the LLM response cache, by model."},
    {"failed_titles", "newscls_llm_failed_titles_total",
     "Titles no LLM request answered (\"unknown\" with \"failed\": true, a 500, or a cascade's earlier members' "
     "answer), by model."},
    {"refused_titles", "newscls_llm_refused_titles_total",
     "Titles the LLM server refused one by one (answered \"unknown\"), by model."},
    {"unknown_replies", "newscls_llm_unknown_replies_total", "LLM replies that named no class, by model."},
    {"cost_usd", "newscls_llm_cost_usd_total", "Cost of the LLM requests at the bundle's prices, in USD, by model."},
};

void ServeMetrics::record_requests(const std::string& model, const nlohmann::json& run_stats) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::map<std::string, double>& totals = llm_[model];
  for (const RequestCounter& c : kRequestCounters) {
    const auto it = run_stats.find(c.key);
    if (it != run_stats.end() && it->is_number()) totals[c.key] += it->get<double>();
  }
}

void ServeMetrics::render_requests_sent(std::string& out) const {
  if (llm_.empty()) return;  // no model sends requests
  for (const RequestCounter& c : kRequestCounters) {
    header(out, c.name, "counter", c.help);
    for (const auto& [model, totals] : llm_) {
      const auto it = totals.find(c.key);
      if (it != totals.end())
        out += std::string(c.name) + "{model=\"" + prometheus_escape(model) + "\"} " + number(it->second) + "\n";
    }
  }
}

void ServeMetrics::render_requests(std::string& out) const {
  header(out, "newscls_http_requests_total", "counter", "HTTP requests answered, by path and status.");
  for (const auto& [key, n] : requests_) {
    out += "newscls_http_requests_total{path=\"" + key.first + "\",status=\"" + std::to_string(key.second) + "\"} " +
           std::to_string(n) + "\n";
  }
  header(out, "newscls_http_request_duration_seconds", "histogram",
         "Time from the request's headers to its response, by path.");
  for (const auto& [path, h] : latency_)
    h.render(out, "newscls_http_request_duration_seconds", "path=\"" + path + "\"");
}

void ServeMetrics::render_models(std::string& out) const {
  header(out, "newscls_titles_total", "counter", "Titles classified, by model.");
  for (const auto& [model, n] : titles_) {
    out += "newscls_titles_total{model=\"" + prometheus_escape(model) + "\"} " + std::to_string(n) + "\n";
  }
  header(out, "newscls_batch_size", "histogram", "Titles per forward pass (micro-batch), by model.");
  for (const auto& [model, h] : batch_sizes_)
    h.render(out, "newscls_batch_size", "model=\"" + prometheus_escape(model) + "\"");
  header(out, "newscls_reloads_total", "counter", "SIGHUP reloads, by result.");
  out += "newscls_reloads_total{result=\"ok\"} " + std::to_string(reloads_ok_) + "\n";
  out += "newscls_reloads_total{result=\"failed\"} " + std::to_string(reloads_failed_) + "\n";
}

std::string ServeMetrics::render(const std::vector<ServedState>& served) const {
  std::string out;
  std::lock_guard<std::mutex> lock(mutex_);
  render_requests(out);
  render_models(out);
  render_requests_sent(out);
  header(out, "newscls_queue_depth", "gauge", "Requests waiting for a batch, by model.");
  for (const ServedState& s : served) {
    out += "newscls_queue_depth{model=\"" + prometheus_escape(s.model) + "\"} " + std::to_string(s.queue_depth) + "\n";
  }
  if (llm_.empty()) return out;
  header(out, "newscls_llm_endpoint_paused", "gauge",
         "1 while the model's LLM endpoint, taken for down after titles in a row with no answer, is asked nothing "
         "(backoff_max_s; its titles fail at once), by model.");
  for (const ServedState& s : served) {
    if (llm_.count(s.model) == 0) continue;  // sends no requests
    out += "newscls_llm_endpoint_paused{model=\"" + prometheus_escape(s.model) + "\"} " +
           (s.endpoint_paused ? "1" : "0") + "\n";
  }
  return out;
}

std::string prometheus_escape(const std::string& value) {
  std::string out;
  for (const char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    out += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  return out;
}

}  // namespace newscls::serve
