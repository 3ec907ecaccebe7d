// Placeholder until the tfidf-rf family lands: refuses to run instead of pretending.
#include "tfidf_rf/tfidf_rf.h"

#include "newscls/error.h"

namespace newscls::tfidf_rf {

std::unique_ptr<Classifier> make_classifier() {
  throw UsageError("model family 'tfidf-rf' is not built yet");
}

nlohmann::json default_config() { return nlohmann::json::object(); }

}  // namespace newscls::tfidf_rf
