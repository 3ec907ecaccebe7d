#include "newscls/core/request_stats.h"

#include <cstdio>

namespace newscls {

bool sends_requests(const nlohmann::json& run_stats) {
  return run_stats.contains("requests_sent") &&
         (run_stats.value("requests_sent", 0.0) > 0 || run_stats.contains("cache_hits"));
}

std::string requests_line(const nlohmann::json& run_stats) {
  std::string line = "requests sent (LLM calls) " + run_stats["requests_sent"].dump();
  for (const char* key : {"cache_hits", "retries", "unknown_replies"}) {
    if (run_stats.contains(key)) line += std::string("   ") + key + " " + run_stats[key].dump();
  }
  for (const char* key : {"failed_titles", "refused_titles"}) {  // rare: said when there are some
    if (run_stats.value(key, 0) > 0) line += std::string("   ") + key + " " + run_stats[key].dump();
  }
  char cost[64];
  std::snprintf(cost, sizeof cost, "   cost %.4f USD", run_stats.value("cost_usd", 0.0));
  return line + cost;
}

std::string failed_titles_line(const nlohmann::json& run_stats) {
  const long long failed = run_stats.value("failed_titles", 0LL);
  if (failed <= 0) return "";
  return std::to_string(failed) + " title(s) got no answer from the LLM and are predicted " +
         (run_stats.contains("members")
              ? "by the cascade's earlier members (combine=product, or a member before the last) or unknown"
              : "unknown");
}

}  // namespace newscls
