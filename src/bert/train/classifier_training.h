// `newscls train --model bert`: the vocabulary and encoder prepared (from --init DIR, --init
// hf:DIR, a finished pretraining phase of an interrupted run, pretraining now, or random
// weights), then the classifier fine-tuned (training.h) into the runtime's state.
//
//   nlohmann::json facts = train_classifier(state, ctx);   // state.trained: the tensors
#pragma once

#include <nlohmann/json.hpp>

#include "bert/classifier_state.h"
#include "newscls/core/classifier.h"

namespace newscls::bert {

nlohmann::json train_classifier(ClassifierState& state, const TrainContext& ctx);

}  // namespace newscls::bert
