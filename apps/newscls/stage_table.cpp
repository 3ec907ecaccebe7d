#include "stage_table.h"

#include <cstdio>
#include <string>

#include "newscls/core/request_stats.h"

namespace newscls::app {

void print_stage_table(const nlohmann::json& report, std::FILE* to) {
  if (report.contains("stages")) {
    std::fprintf(to, "\nstage           answered  share    accuracy\n");
    for (const auto& s : report["stages"]) {
      const std::string name = s.contains("name") ? s["name"].get<std::string>() : s["stage"].dump();
      std::fprintf(to, "%-15s %-9zu %-8.4f %.4f\n", name.c_str(), s["answered"].get<std::size_t>(),
                   s["share"].get<double>(), s["accuracy"].get<double>());
    }
  }
  const nlohmann::json stats = report.value("run_stats", nlohmann::json::object());
  if (!sends_requests(stats)) return;  // a cascade without an LLM member says nothing, as in predict
  std::fprintf(to, "%s\n", requests_line(stats).c_str());
}

}  // namespace newscls::app
