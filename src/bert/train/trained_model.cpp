#include "bert/train/trained_model.h"

#include <algorithm>

#include "bert/model/tensor_io.h"

namespace newscls::bert {

void build_model(ClassifierState& state, TrainedModel& m, std::int64_t num_classes) {
  // An imported table may have more rows than vocab.txt has lines.
  state.options.arch.vocab_size = std::max(state.options.arch.vocab_size, state.vocab->size());
  state.vocab->set_fold_punctuation(state.options.fold_punctuation);
  m.model = ClassifierModel(state.options.arch, num_classes, m.rng);
}

std::vector<NamedArray> tensors_of(const torch::nn::Module& model) {
  std::vector<NamedArray> out;
  for (const auto& [name, tensor] : named_state(model)) {
    const torch::Tensor t = tensor.detach().to(torch::kFloat32).contiguous();
    NamedArray a;
    a.name = name;
    a.shape.assign(t.sizes().begin(), t.sizes().end());
    a.values.assign(t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace newscls::bert
