// Factory entry points of the fasttext family (see include/newscls/core/classifier.h).
#pragma once

#include <memory>

#include <nlohmann/json.hpp>

#include "newscls/core/classifier.h"

namespace newscls::fasttext {

std::unique_ptr<Classifier> make_classifier();
// Documented defaults; configs/fasttext.json mirrors them (a unit test checks).
nlohmann::json default_config();

}  // namespace newscls::fasttext
