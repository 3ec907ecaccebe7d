#include "newscls/classifier.h"

#include <algorithm>
#include <utility>

#include "newscls/error.h"

namespace newscls {

Prediction prediction_from_probs(std::vector<float> probs) {
  Prediction p;
  if (probs.empty()) return p;
  const auto best = std::max_element(probs.begin(), probs.end());
  p.label = static_cast<int>(best - probs.begin());
  p.score = *best;
  p.probs = std::move(probs);
  return p;
}

void Classifier::dump_attention(const std::vector<std::string>&, std::size_t, const std::string&) {
  throw UsageError("model family '" + family() + "' has no attention weights to dump");
}

std::vector<Embedding> Classifier::embed(const std::vector<std::string>&) {
  throw UsageError("model family '" + family() + "' has no encoder to embed titles with");
}

}  // namespace newscls
