#include "bert/compress/attention_kl.h"

#include <algorithm>

#include "newscls/core/error.h"

namespace newscls::bert {

torch::Tensor soft_label_kl(const torch::Tensor& student_logits, const torch::Tensor& teacher_log_probs_t,
                            double temperature) {
  const torch::Tensor student = torch::log_softmax(student_logits / temperature, 1);
  const torch::Tensor kl = (teacher_log_probs_t.exp() * (teacher_log_probs_t - student)).sum(1);
  return kl.mean() * (temperature * temperature);
}

torch::Tensor soften_probabilities(const torch::Tensor& probs, double temperature) {
  return torch::log_softmax(probs.clamp_min(1e-8).log() / temperature, 1);
}

torch::Tensor attention_kl(const torch::Tensor& teacher, const torch::Tensor& student, const torch::Tensor& key_valid) {
  if (teacher.dim() != 4 || student.dim() != 4 || teacher.size(-1) != student.size(-1)) {
    throw UsageError("attention_kl needs (batch, heads, queries, keys) weights of equal length");
  }
  torch::Tensor t = teacher, s = student;
  if (t.size(1) != s.size(1)) {
    t = t.mean(1, /*keepdim=*/true);
    s = s.mean(1, /*keepdim=*/true);
  }
  const torch::Tensor valid = key_valid.to(torch::kBool);
  const torch::Tensor keys = valid.unsqueeze(1).unsqueeze(1);  // (B,1,1,T)
  // Clamped logarithms keep 0 * log 0 finite (and its gradient zero) at masked keys.
  const double tiny = 1e-30;
  const torch::Tensor terms = t * (t.clamp_min(tiny).log() - s.clamp_min(tiny).log());
  const torch::Tensor rows = torch::where(keys, terms, torch::zeros_like(terms)).sum(-1);  // (B,H,T)
  const torch::Tensor queries = valid.unsqueeze(1).to(rows.scalar_type());                 // (B,1,T)
  const torch::Tensor count = queries.sum() * rows.size(1);
  return (rows * queries).sum() / count.clamp_min(1.0);
}

std::vector<std::int64_t> teacher_layer_map(std::int64_t student_layers, std::int64_t teacher_layers) {
  if (student_layers < 1 || teacher_layers < 1) throw UsageError("layer map needs layers on both sides");
  std::vector<std::int64_t> map;
  for (std::int64_t i = 0; i < student_layers; ++i) {
    map.push_back(std::max<std::int64_t>(0, (i + 1) * teacher_layers / student_layers - 1));
  }
  return map;
}

}  // namespace newscls::bert
