#include "stage_table.h"

#include <cstdio>
#include <string>

namespace newscls::app {

void print_stage_table(const nlohmann::json& report) {
  if (!report.contains("stages")) return;
  std::printf("\nstage           answered  share    accuracy\n");
  for (const auto& s : report["stages"]) {
    const std::string name = s.contains("name") ? s["name"].get<std::string>() : s["stage"].dump();
    std::printf("%-15s %-9zu %-8.4f %.4f\n", name.c_str(), s["answered"].get<std::size_t>(), s["share"].get<double>(),
                s["accuracy"].get<double>());
  }
  const auto& stats = report["run_stats"];
  if (stats.contains("requests_sent")) {
    std::printf("requests sent (LLM calls) %s   cost %.4f USD\n", stats["requests_sent"].dump().c_str(),
                stats.value("cost_usd", 0.0));
  }
}

}  // namespace newscls::app
