// The small bert the unit tests build models of: 2 layers, 4 heads, a 40-token vocabulary,
// 12 positions and a 64-row bigram table; width and feed-forward size as a test needs them.
#pragma once

#include <cstdint>

#include "bert/model/architecture.h"

namespace newscls::bert {

inline Architecture tiny_test_arch(std::int64_t hidden = 32, std::int64_t ff = 64) {
  Architecture a;
  a.vocab_size = 40;
  a.layers = 2;
  a.hidden = hidden;
  a.heads = 4;
  a.ff = ff;
  a.max_len = 12;
  a.bigram_buckets = 64;
  return a;
}

}  // namespace newscls::bert
