// What a bert classifier is made of: its config, vocabulary, model and labels. The runtime's
// classifier owns it; the training library (bert_training.h) fills it when training or
// importing a checkpoint, and the runtime predicts, saves and dumps attention from it.
//
//   ClassifierState state;                  // the documented defaults
//   state.vocab = TitleTokenizer(CharVocab::build(titles, 1, 0));
//   build_model(state, num_classes);        // a fresh model for the vocabulary
//   std::unique_ptr<Classifier> c = make_classifier(std::move(state));
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bert/model/encoder.h"
#include "bert/model/fast_dropout.h"
#include "bert/model/settings.h"
#include "bert/tokens/title_tokenizer.h"
#include "newscls/core/classifier.h"
#include "newscls/core/config.h"

namespace newscls::bert {

struct ClassifierState {
  nlohmann::json config = settings_table().defaults();
  Settings options = parse_settings(config);
  std::optional<TitleTokenizer> vocab;
  std::shared_ptr<MaskRng> rng = std::make_shared<MaskRng>(1);
  ClassifierModel model{nullptr};
  std::vector<std::string> label_names;
  std::string imported_from;  // the checkpoint an imported bundle came from, for its errors
};

// A fresh model for the state's vocabulary and architecture (num_classes 0: no head).
void build_model(ClassifierState& state, std::int64_t num_classes);
// The classifier that predicts and saves what the state holds.
std::unique_ptr<Classifier> make_classifier(ClassifierState state);

}  // namespace newscls::bert
