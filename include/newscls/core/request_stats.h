// The line train, eval and predict print of a run that sent requests (an LLM, a cascade with
// one): `requests sent (LLM calls) 40   cache_hits 0   retries 0   unknown_replies 0   cost
// 0.0005 USD`, each count that the run's stats hold (a cascade's are its members' sums), and
// failed_titles and refused_titles where there were some.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace newscls {

// Whether these run_stats are of a model that sends requests (an LLM, a cascade with one): a
// cascade without an LLM member counts 0 requests and keeps no cache hits.
bool sends_requests(const nlohmann::json& run_stats);
// The counts of an LLM's run_stats that add up over models: a cascade sums its members' (and
// serve's /metrics shows each, with cost_usd).
inline constexpr const char* kRequestCounts[] = {"requests_sent",   "retries",       "cache_hits",
                                                 "unknown_replies", "failed_titles", "refused_titles"};
// run_stats holds "requests_sent".
std::string requests_line(const nlohmann::json& run_stats);
// "12 title(s) got no answer from the LLM and are predicted unknown" (a cascade: by its earlier
// members...); empty when every title got one.
std::string failed_titles_line(const nlohmann::json& run_stats);

}  // namespace newscls
