// Bucketing titles by length into batches (no LibTorch): training shuffles the buckets,
// prediction, embed and the runtime's forward pass sort by length so little padding is computed.
//
//   auto groups = bucket_batches(lengths, 64, &rng);   // training: shuffled buckets
//   auto sorted = bucket_batches(lengths, 64, nullptr); // prediction: by length
#pragma once

#include <cstddef>
#include <random>
#include <vector>

namespace newscls::bert {

// With rng: shuffle, sort by length inside pools of 50 batches, cut, shuffle batch order.
// Without: sorted by length over everything (prediction), order restored via the rows.
std::vector<std::vector<std::size_t>> bucket_batches(const std::vector<std::size_t>& lengths, std::size_t batch_size,
                                                     std::mt19937_64* rng);

}  // namespace newscls::bert
