// Turning encoded titles into padded batches: dynamic padding to the longest title of each
// batch, and batches bucketed by length so little padding is computed at all.
//
//   auto groups = bucket_batches(lengths, 64, &rng);      // training: shuffled buckets
//   Batch b = make_batch(encoded, groups[0], &labels);     // ids, key_valid, labels
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include <torch/torch.h>

#include "bert/tokens/buckets.h"

namespace newscls::bert {

struct Batch {
  torch::Tensor ids;        // int64 (B, T), padded with kPad
  torch::Tensor key_valid;  // bool (B, T), true at real tokens
  torch::Tensor labels;     // int64 (B), undefined without labels
  std::vector<std::size_t> rows;
};

Batch make_batch(const std::vector<std::vector<std::int64_t>>& encoded, const std::vector<std::size_t>& rows,
                 const std::vector<int>* labels);

// Length augmentation for fine-tuning: with probability join_prob, the title of `row` becomes
// [CLS] a [SEP] b [SEP] with b another title of the same label (cut to max_len ids, [SEP]
// kept last); otherwise it is returned as it is.
std::vector<std::int64_t> join_same_label(const std::vector<std::vector<std::int64_t>>& encoded, std::size_t row,
                                          const std::vector<std::vector<std::size_t>>& by_label,
                                          const std::vector<int>& labels, double join_prob, std::int64_t max_len,
                                          std::mt19937_64& rng);

}  // namespace newscls::bert
