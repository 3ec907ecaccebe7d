// The two distillation losses: the student's temperature-softened class distribution against
// the teacher's, and the student's attention rows against the teacher's.
//
//   torch::Tensor s = soft_label_kl(student_logits, teacher_log_probs_t, 2.0);  // T^2 KL
//   torch::Tensor a = attention_kl(teacher_weights, student_weights, key_valid);
//   std::vector<std::int64_t> m = teacher_layer_map(1, 2);                      // {1}
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

namespace newscls::bert {

// T^2 * mean over rows of KL(teacher_T || softmax(student_logits / T)); teacher_log_probs_t
// (B, C) are the teacher's log-probabilities already softened by T. The T^2 keeps the
// gradient's scale independent of T (Hinton et al. 2015).
torch::Tensor soft_label_kl(const torch::Tensor& student_logits, const torch::Tensor& teacher_log_probs_t,
                            double temperature);

// log softmax(log(p) / T) of probability rows p (N, C): the teacher's distribution softened
// by T, p clamped at 1e-8 so that a zero keeps a finite logarithm.
torch::Tensor soften_probabilities(const torch::Tensor& probs, double temperature);

// KL(teacher row || student row) of attention weights (B, H, T, T), summed over the real keys
// (key_valid (B, T) true; padded keys carry no weight in either) and averaged over heads and
// real query rows. Differing head counts: both sides are first averaged over their heads.
torch::Tensor attention_kl(const torch::Tensor& teacher, const torch::Tensor& student, const torch::Tensor& key_valid);

// The teacher layer each student layer learns from: student layer i (0-based) of Ls takes
// teacher layer floor((i + 1) * Lt / Ls) - 1, the last of its block of teacher layers.
std::vector<std::int64_t> teacher_layer_map(std::int64_t student_layers, std::int64_t teacher_layers);

}  // namespace newscls::bert
