// Factory entry points of the tfidf-rf family (see include/newscls/core/classifier.h).
#pragma once

#include <memory>

#include <nlohmann/json.hpp>

#include "newscls/core/classifier.h"

namespace newscls::tfidf_rf {

std::unique_ptr<Classifier> make_classifier();
// Documented defaults; configs/tfidf-rf.json mirrors them (a unit test checks).
nlohmann::json default_config();

}  // namespace newscls::tfidf_rf
