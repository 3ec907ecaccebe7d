#include "bert/model/architecture.h"

#include <algorithm>

#include "bert/tokens/vocab.h"

namespace newscls::bert {
namespace {

constexpr std::uint64_t kNgramHash = 2654435761;  // Knuth's multiplicative hash
constexpr std::uint64_t kPrime31 = 2147483647;    // keeps the id tuple's code within 64 bits

// The bucket of the n-gram of real characters ids[0..order). The first bundles computed it
// on int64 tensors, where code * kNgramHash wraps around for trigrams, the shift copies the
// sign bit and the remainder is floored. The same steps in uint64_t, which wraps by
// definition, give the same buckets without signed overflow.
std::int64_t ngram_bucket(const std::int64_t* ids, int order, std::uint64_t vocab, std::uint64_t buckets) {
  auto code = static_cast<std::uint64_t>(ids[0]);
  for (int k = 1; k < order; ++k) {
    if (k > 1) code %= kPrime31;  // order 2 keeps the first bundles' hash
    code = code * vocab + static_cast<std::uint64_t>(ids[k]);
  }
  const std::uint64_t mixed = code * kNgramHash;
  const std::uint64_t sign_fill = (mixed >> 63) != 0 ? ~(~std::uint64_t{0} >> 29) : 0;
  const std::uint64_t x = mixed ^ ((mixed >> 29) | sign_fill);
  const std::uint64_t m = buckets - 1;
  std::uint64_t r = 0;
  if ((x >> 63) == 0) {
    r = x % m;
  } else {  // x read as signed is -(0 - x): its floored remainder
    const std::uint64_t below = (0 - x) % m;
    r = below == 0 ? 0 : m - below;
  }
  return static_cast<std::int64_t>(r + 1);
}

}  // namespace

std::int64_t layer_heads(const Architecture& arch, std::int64_t layer) {
  if (arch.heads_per_layer.empty()) return arch.heads;
  return arch.heads_per_layer.at(static_cast<std::size_t>(layer));
}

void ngram_buckets_of_row(const std::int64_t* ids, std::int64_t t, std::int64_t vocab_size, std::int64_t buckets,
                          int order, std::int64_t* out) {
  std::fill(out, out + t, std::int64_t{0});
  for (std::int64_t j = 0; j + order <= t; ++j) {
    // A special token anywhere in the window ([PAD] past the end included) hides it.
    if (std::all_of(ids + j, ids + j + order, [](std::int64_t id) { return id >= kNumSpecial; })) {
      out[j] =
          ngram_bucket(ids + j, order, static_cast<std::uint64_t>(vocab_size), static_cast<std::uint64_t>(buckets));
    }
  }
}

}  // namespace newscls::bert
