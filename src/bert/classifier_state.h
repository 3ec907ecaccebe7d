// What a bert classifier is made of: its config, vocabulary, weights and labels, without
// LibTorch. The runtime's classifier owns it; the training library (bert_training.h) fills it
// when training or importing a checkpoint (its LibTorch model's tensors left in `trained`),
// and the runtime predicts, saves and dumps attention from it.
//
//   ClassifierState state;                  // the documented defaults
//   state.vocab = TitleTokenizer(CharVocab::build(titles, 1, 0));
//   state.trained = tensors_of(*model);     // train/trained_model.h, in the training library
//   std::unique_ptr<Classifier> c = make_classifier(std::move(state));
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bert/model/settings.h"
#include "bert/model/state_payload.h"
#include "bert/tokens/title_tokenizer.h"
#include "newscls/core/classifier.h"
#include "newscls/core/config.h"

namespace newscls::bert {

struct ClassifierState {
  nlohmann::json config = settings_table().defaults();
  Settings options = parse_settings(config);
  std::optional<TitleTokenizer> vocab;
  // A trained or imported model's tensors (expected_state's names and shapes), handed over
  // once: the classifier moves them into its runtime.
  std::vector<NamedArray> trained;
  std::vector<std::string> label_names;
  std::string imported_from;  // the checkpoint an imported bundle came from, for its errors
};

// The classifier that predicts and saves what the state holds.
std::unique_ptr<Classifier> make_classifier(ClassifierState state);

}  // namespace newscls::bert
