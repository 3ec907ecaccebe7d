#include "llm/run_stats.h"

#include <algorithm>
#include <cmath>

namespace newscls::llm {

Usage& Usage::operator+=(const Usage& other) {
  prompt_tokens += other.prompt_tokens;
  completion_tokens += other.completion_tokens;
  cached_tokens += other.cached_tokens;
  return *this;
}

double cost_usd(const Usage& usage, const Prices& prices) {
  const long long cached = std::min(usage.cached_tokens, usage.prompt_tokens);
  const double input = static_cast<double>(usage.prompt_tokens - cached) * prices.input_per_m +
                       static_cast<double>(cached) * prices.cached_input_per_m;
  const double output = static_cast<double>(usage.completion_tokens) * prices.output_per_m;
  return (input + output) / 1e6;
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = std::ceil(p / 100.0 * static_cast<double>(values.size()));
  const std::size_t index = rank < 1 ? 0 : static_cast<std::size_t>(rank) - 1;
  return values[std::min(index, values.size() - 1)];
}

nlohmann::json RunStats::to_json(const Prices& prices) const {
  return {
      {"titles", titles},
      {"requests_sent", requests_sent},
      {"retries", retries},
      {"cache_hits", cache_hits},
      {"duplicate_titles", duplicate_titles},
      {"unknown_replies", unknown_replies},
      {"failed_titles", failed_titles},
      {"refused_titles", refused_titles},
      {"empty_titles", empty_titles},
      {"prompt_tokens", usage.prompt_tokens},
      {"completion_tokens", usage.completion_tokens},
      {"cached_tokens", usage.cached_tokens},
      {"cost_usd", cost_usd(usage, prices)},
      {"latency_ms",
       {{"p50", percentile(latencies_ms, 50)},
        {"p95", percentile(latencies_ms, 95)},
        {"p99", percentile(latencies_ms, 99)},
        {"count", latencies_ms.size()}}},
  };
}

}  // namespace newscls::llm
