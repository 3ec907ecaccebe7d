// Counters of one LLM run, reported in metrics.json: requests, retries, cache hits,
// unknown replies, token usage, estimated cost and request latency percentiles.
//
// Cost = (prompt - cached) * price_input + cached * price_cached_input
//        + completion * price_output, prices in USD per million tokens. Titles answered
// from the response cache cost nothing and add no tokens.
//
//   RunStats s; s.usage += reply.usage; s.latencies_ms.push_back(ms);
//   nlohmann::json j = s.to_json(prices);
#pragma once

#include <cstddef>
#include <vector>

#include <nlohmann/json.hpp>

namespace newscls::llm {

struct Usage {
  long long prompt_tokens = 0;
  long long completion_tokens = 0;
  long long cached_tokens = 0;  // prompt tokens the provider served from its prompt cache
  Usage& operator+=(const Usage& other);
};

struct Prices {
  double input_per_m = 0;
  double cached_input_per_m = 0;
  double output_per_m = 0;
};

double cost_usd(const Usage& usage, const Prices& prices);
// Nearest-rank percentile (p in 0..100) of unsorted values; 0 for none.
double percentile(std::vector<double> values, double p);

struct RunStats {
  std::size_t titles = 0;         // titles asked to classify
  std::size_t requests_sent = 0;  // HTTP attempts, retries included
  std::size_t retries = 0;
  std::size_t cache_hits = 0;        // titles answered from the response cache
  std::size_t duplicate_titles = 0;  // repeats of a title in the same batch, asked once
  std::size_t unknown_replies = 0;   // replies that map to no class
  std::size_t failed_titles = 0;     // retries exhausted: predicted unknown (failed), not cached
  std::size_t refused_titles = 0;    // refused by the server one by one (a 400): unknown, not cached
  std::size_t empty_titles = 0;      // nothing to ask: predicted unknown
  Usage usage;
  std::vector<double> latencies_ms;  // of each answered request

  nlohmann::json to_json(const Prices& prices) const;
};

}  // namespace newscls::llm
