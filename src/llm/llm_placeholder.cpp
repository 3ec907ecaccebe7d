// Placeholder until the llm family lands: refuses to run instead of pretending.
#include "llm/llm.h"

#include "newscls/error.h"

namespace newscls::llm {

std::unique_ptr<Classifier> make_classifier() {
  throw UsageError("model family 'llm' is not built yet");
}

nlohmann::json default_config() { return nlohmann::json::object(); }

}  // namespace newscls::llm
