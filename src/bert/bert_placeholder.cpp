// Placeholder until the bert family lands: refuses to run instead of pretending.
#include "bert/bert.h"

#include "newscls/error.h"

namespace newscls::bert {

std::unique_ptr<Classifier> make_classifier() {
  throw UsageError("model family 'bert' is not built yet");
}

nlohmann::json default_config() { return nlohmann::json::object(); }

}  // namespace newscls::bert
