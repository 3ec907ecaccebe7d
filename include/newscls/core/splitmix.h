// SplitMix64: a tiny, fast, well-mixed 64-bit generator step, used to derive per-tree,
// per-thread and per-stream seeds deterministically from one user seed.
//
//   std::uint64_t state = seed;
//   std::uint64_t a = splitmix64(state), b = splitmix64(state);
#pragma once

#include <cstdint>

namespace newscls {

inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace newscls
