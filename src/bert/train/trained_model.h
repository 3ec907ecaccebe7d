// The LibTorch model that training and imports work on, made for a ClassifierState, and its
// tensors handed back to the runtime's classifier (classifier_state.h) when done.
//
//   TrainedModel m;
//   build_model(state, m, num_classes);   // a fresh model for the state's vocabulary
//   ...                                    // train or copy weights into m.model
//   state.trained = tensors_of(*m.model);
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <torch/torch.h>

#include "bert/classifier_state.h"
#include "bert/model/encoder.h"
#include "bert/model/fast_dropout.h"

namespace newscls::bert {

struct TrainedModel {
  ClassifierModel model{nullptr};
  // The dropout masks' generator, shared by the model's layers: reseeded once per run.
  std::shared_ptr<MaskRng> rng = std::make_shared<MaskRng>(1);
};

// A fresh model for the state's vocabulary and architecture (num_classes 0: no head); sizes
// the architecture's vocabulary to the tokenizer's.
void build_model(ClassifierState& state, TrainedModel& m, std::int64_t num_classes);
// The model's tensors (named_state order) as f32 arrays.
std::vector<NamedArray> tensors_of(const torch::nn::Module& model);

}  // namespace newscls::bert
