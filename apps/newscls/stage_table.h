// A cascade's per-stage table (titles answered, share, accuracy, then the LLM calls and
// cost), printed by eval and train from their metrics.json report; nothing for other models.
#pragma once

#include <nlohmann/json.hpp>

namespace newscls::app {

void print_stage_table(const nlohmann::json& report);

}  // namespace newscls::app
