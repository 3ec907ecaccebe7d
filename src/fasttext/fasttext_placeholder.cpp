// Placeholder until the fasttext family lands: refuses to run instead of pretending.
#include "fasttext/fasttext.h"

#include "newscls/error.h"

namespace newscls::fasttext {

std::unique_ptr<Classifier> make_classifier() {
  throw UsageError("model family 'fasttext' is not built yet");
}

nlohmann::json default_config() { return nlohmann::json::object(); }

}  // namespace newscls::fasttext
