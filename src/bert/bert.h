// Factory entry points of the bert family (see include/newscls/classifier.h).
#pragma once

#include <memory>

#include <nlohmann/json.hpp>

#include "newscls/classifier.h"

namespace newscls::bert {

std::unique_ptr<Classifier> make_classifier();
// Documented defaults; configs/bert.json mirrors them (a unit test checks).
nlohmann::json default_config();

}  // namespace newscls::bert
