// A cascade's per-stage table (titles answered, share, accuracy) and, for any model that
// sends requests (an LLM, a cascade ending in one), its calls, cache hits, retries and cost;
// printed by eval and train from their metrics.json report; nothing for other models.
#pragma once

#include <cstdio>

#include <nlohmann/json.hpp>

namespace newscls::app {

void print_stage_table(const nlohmann::json& report, std::FILE* to = stdout);

}  // namespace newscls::app
