#include "newscls/core/classifier.h"

#include <algorithm>
#include <utility>

#include "newscls/core/error.h"

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

std::vector<Prediction> predict_titles(Classifier& model, const std::vector<std::string>& titles) {
  std::vector<std::size_t> with_text;
  for (std::size_t i = 0; i < titles.size(); ++i) {
    if (!is_blank_title(titles[i])) with_text.push_back(i);
  }
  if (with_text.size() == titles.size()) return model.predict_batch(titles);
  std::vector<std::string> asked;
  asked.reserve(with_text.size());
  for (std::size_t i : with_text) asked.push_back(titles[i]);
  std::vector<Prediction> answers = asked.empty() ? std::vector<Prediction>{} : model.predict_batch(asked);
  std::vector<Prediction> out(titles.size());
  for (Prediction& p : out) p.abstained = true;
  for (std::size_t k = 0; k < with_text.size(); ++k) out[with_text[k]] = std::move(answers[k]);
  return out;
}

void Classifier::dump_attention(const std::vector<std::string>&, std::size_t, const std::string&, const ProbsAdjust&) {
  throw UsageError("model family '" + family() + "' has no attention weights to dump");
}

std::vector<Embedding> Classifier::embed(const std::vector<std::string>&) {
  throw UsageError("model family '" + family() + "' has no encoder to embed titles with");
}

}  // namespace newscls
