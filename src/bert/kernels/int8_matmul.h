// y = x W^T + b with W stored as int8 rows (one symmetric scale per output channel), run by
// oneDNN's int8 matmul directly, on plain row-major arrays (no LibTorch): the GEMM of both the
// LibTorch int8 twins (int8_gemm.h) and the inference runtime (runtime/). Each call quantises x
// per row (symmetric int8, scale = max|row| / 127), multiplies in int8 with int32 sums, and
// rescales by row scale x channel scale, tile by tile so a tile's rows stay in cache (writing
// the f32 output is what costs: 64-row tiles ran up to 1.15x faster than 512-row ones in a
// standalone check here). The primitives have fixed shapes (kTileRows and kSmallTileRows rows),
// created once: oneDNN then runs its best int8 kernel (AMX or VNNI where the CPU has them) and
// never rebuilds a primitive per call, which LibTorch 1.13's quantized::linear_dynamic does on
// the oneDNN engine (its zero point and scales are baked into each primitive), and which cost it
// most of its time here.
//
//   Int8Matmul mm(values /*out x in int8*/, scales /*out*/, bias /*out or empty*/, out, in);
//   mm.forward(x, rows, y);    // x rows x in f32 -> y rows x out f32
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace newscls::bert {

class Int8Matmul {
 public:
  static constexpr std::int64_t kTileRows = 64;
  static constexpr std::int64_t kSmallTileRows = 32;

  // values: out x in int8, row-major; scales: out; bias: out, or empty for none.
  Int8Matmul(const std::int8_t* values, const float* scales, std::vector<float> bias, std::int64_t out,
             std::int64_t in);
  ~Int8Matmul();
  Int8Matmul(const Int8Matmul&) = delete;
  Int8Matmul& operator=(const Int8Matmul&) = delete;

  std::int64_t in() const;
  std::int64_t out() const;
  // Thread-safe: the primitives and weights are only read. x: rows x in, y: rows x out.
  void forward(const float* x, std::int64_t rows, float* y) const;

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
