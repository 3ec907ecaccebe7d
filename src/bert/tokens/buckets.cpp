#include "bert/tokens/buckets.h"

#include <algorithm>
#include <numeric>

namespace newscls::bert {
namespace {

constexpr std::size_t kPoolBatches = 50;

}  // namespace

std::vector<std::vector<std::size_t>> bucket_batches(const std::vector<std::size_t>& lengths, std::size_t batch_size,
                                                     std::mt19937_64* rng) {
  std::vector<std::size_t> order(lengths.size());
  std::iota(order.begin(), order.end(), 0);
  auto by_length = [&](std::size_t a, std::size_t b) { return lengths[a] < lengths[b]; };
  if (rng != nullptr) {
    std::shuffle(order.begin(), order.end(), *rng);
    const std::size_t pool = batch_size * kPoolBatches;
    for (std::size_t start = 0; start < order.size(); start += pool) {
      auto end = order.begin() + std::min(order.size(), start + pool);
      std::stable_sort(order.begin() + start, end, by_length);
    }
  } else {
    std::stable_sort(order.begin(), order.end(), by_length);
  }
  std::vector<std::vector<std::size_t>> batches;
  for (std::size_t start = 0; start < order.size(); start += batch_size) {
    auto end = order.begin() + std::min(order.size(), start + batch_size);
    batches.emplace_back(order.begin() + start, end);
  }
  if (rng != nullptr) std::shuffle(batches.begin(), batches.end(), *rng);
  return batches;
}

}  // namespace newscls::bert
