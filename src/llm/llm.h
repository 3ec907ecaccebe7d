// Factory entry points of the llm family (see include/newscls/core/classifier.h).
#pragma once

#include <memory>

#include <nlohmann/json.hpp>

#include "newscls/core/classifier.h"

namespace newscls::llm {

std::unique_ptr<Classifier> make_classifier();
// Documented defaults; configs/llm.json mirrors them (a unit test checks).
nlohmann::json default_config();

}  // namespace newscls::llm
