// The line train, eval and predict print of a run that sent requests (an LLM, a cascade with
// one): `requests sent (LLM calls) 40   cache_hits 0   retries 0   unknown_replies 0   cost
// 0.0005 USD`, each count that the run's stats hold (a cascade's are its members' sums).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace newscls {

// run_stats holds "requests_sent".
std::string requests_line(const nlohmann::json& run_stats);

}  // namespace newscls
