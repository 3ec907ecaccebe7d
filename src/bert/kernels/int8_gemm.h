// y = x W^T + b with W stored as int8 rows (one symmetric scale per output channel), run by
// oneDNN's int8 matmul directly. Each call quantises x per row (symmetric int8, scale =
// max|row| / 127), multiplies in int8 with int32 sums, and rescales by row scale x channel
// scale, tile by tile so a tile's rows stay in cache (writing the f32 output is what costs:
// 64-row tiles ran up to 1.15x faster than 512-row ones in a standalone check here). The
// primitives have fixed shapes (kTileRows and kSmallTileRows rows), created once: oneDNN then
// runs its best int8 kernel (AMX or VNNI where the CPU has them) and never rebuilds a
// primitive per call, which LibTorch 1.13's quantized::linear_dynamic does on the oneDNN
// engine (its zero point and scales are baked into each primitive), and which cost it most of
// its time here.
//
//   Int8Gemm gemm(q8 /*Int8Rows of W (out, in)*/, bias);   // bias may be undefined
//   torch::Tensor y = gemm.forward(x);                      // x (..., in) f32 -> (..., out)
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <torch/torch.h>

#include "bert/kernels/int8_rows.h"

namespace newscls::bert {

class Int8Gemm {
 public:
  static constexpr std::int64_t kTileRows = 64;
  static constexpr std::int64_t kSmallTileRows = 32;

  Int8Gemm(const Int8Rows& weight, const torch::Tensor& bias);
  ~Int8Gemm();
  Int8Gemm(const Int8Gemm&) = delete;
  Int8Gemm& operator=(const Int8Gemm&) = delete;

  // Thread-safe: the primitives and weights are only read.
  torch::Tensor forward(const torch::Tensor& x) const;

 private:
  struct Workspace {
    std::vector<std::int8_t> q;
    std::vector<float> scales, padded;
  };
  // One tile's worth of rows (n <= kTileRows, row-major, in -> out floats).
  void run_tile(const float* src, std::int64_t n, float* dst, Workspace& ws) const;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace newscls::bert
