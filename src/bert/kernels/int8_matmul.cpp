#include "bert/kernels/int8_matmul.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "bert/kernels/onednn.h"

#include "newscls/core/error.h"

namespace newscls::bert {
namespace {

using dnnl::memory;

// One fixed-shape matmul: (rows, in) s8 x (in, out) s8 -> (rows, out) f32, scaled per output
// channel by the weight's scales, its weights reordered into the layout it prefers.
struct Tile {
  std::int64_t rows = 0;
  dnnl::matmul primitive;
  memory weights;
  std::size_t scratchpad_bytes = 0;

  Tile(std::int64_t rows_, const std::vector<std::int8_t>& w_t /*(in, out) int8*/, std::int64_t in, std::int64_t out,
       const std::vector<float>& scales)
      : rows(rows_) {
    const memory::desc src({rows, in}, memory::data_type::s8, memory::format_tag::ab);
    const memory::desc wei({in, out}, memory::data_type::s8, memory::format_tag::any);
    const memory::desc dst({rows, out}, memory::data_type::f32, memory::format_tag::ab);
    dnnl::primitive_attr attr = onednn::user_scratchpad();
    attr.set_output_scales(/*mask=*/1 << 1, scales);
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, wei, dst), attr, onednn::cpu_engine());
    primitive = dnnl::matmul(pd);
    scratchpad_bytes = pd.scratchpad_desc().get_size();
    const dnnl::engine& engine = onednn::cpu_engine();
    memory plain({{in, out}, memory::data_type::s8, memory::format_tag::ab}, engine,
                 const_cast<std::int8_t*>(w_t.data()));
    weights = memory(pd.weights_desc(), engine);
    dnnl::stream stream(engine);
    dnnl::reorder(plain, weights).execute(stream, plain, weights);
    stream.wait();
  }

  // src: rows x in int8; dst: rows x out f32 (both row-major, contiguous).
  void run(const std::int8_t* src, float* dst, std::int64_t in, std::int64_t out) const {
    const dnnl::engine& engine = onednn::cpu_engine();
    onednn::run(primitive,
                {{DNNL_ARG_SRC, memory({{rows, in}, memory::data_type::s8, memory::format_tag::ab}, engine,
                                       const_cast<std::int8_t*>(src))},
                 {DNNL_ARG_WEIGHTS, weights},
                 {DNNL_ARG_DST, memory({{rows, out}, memory::data_type::f32, memory::format_tag::ab}, engine, dst)}},
                scratchpad_bytes);
  }
};

}  // namespace

struct Int8Matmul::Impl {
  std::int64_t in = 0, out = 0;
  std::vector<float> bias;  // empty: none
  std::unique_ptr<Tile> tile, small_tile;
};

Int8Matmul::Int8Matmul(const std::int8_t* values, const float* scales, std::vector<float> bias, std::int64_t out,
                       std::int64_t in)
    : impl_(std::make_unique<Impl>()) {
  if (out < 1 || in < 1) throw UsageError("an int8 GEMM needs a weight of at least one row and column");
  if (!bias.empty() && static_cast<std::int64_t>(bias.size()) != out) {
    throw UsageError("an int8 GEMM's bias needs one value per output");
  }
  impl_->out = out;
  impl_->in = in;
  impl_->bias = std::move(bias);
  std::vector<std::int8_t> w_t(static_cast<std::size_t>(in * out));
  for (std::int64_t o = 0; o < out; ++o) {
    for (std::int64_t i = 0; i < in; ++i) w_t[static_cast<std::size_t>(i * out + o)] = values[o * in + i];
  }
  const std::vector<float> s(scales, scales + out);
  impl_->tile = std::make_unique<Tile>(kTileRows, w_t, in, out, s);
  impl_->small_tile = std::make_unique<Tile>(kSmallTileRows, w_t, in, out, s);
}

Int8Matmul::~Int8Matmul() = default;

std::int64_t Int8Matmul::in() const { return impl_->in; }
std::int64_t Int8Matmul::out() const { return impl_->out; }

namespace {

// Per-row symmetric int8: scale = max|row| / 127 (1 for an all-zero row), q = round(x / scale).
// One pass to find the maximum and one to round, in plain loops the compiler vectorises
// (ATen's abs, amax, div, round and to() took 4x the GEMM's time here, allocating each step).
// Cloned for AVX-512 and AVX2, picked at load time: these passes are most of an int8 layer's time.
__attribute__((target_clones("avx512f", "avx2", "default"))) void quantize_activation_rows(
    const float* x, std::int64_t rows, std::int64_t cols, std::int8_t* q, float* scales) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * cols;
    float top = 0.0f;
#pragma omp simd reduction(max : top)
    for (std::int64_t c = 0; c < cols; ++c) top = std::max(top, std::fabs(row[c]));
    const float scale = top > 0.0f ? top / 127.0f : 1.0f;
    const float inv = 1.0f / scale;
    std::int8_t* out = q + r * cols;
#pragma omp simd
    for (std::int64_t c = 0; c < cols; ++c) {
      const float v = row[c] * inv;
      out[c] = static_cast<std::int8_t>(static_cast<int>(v + std::copysign(0.5f, v)));
    }
    scales[r] = scale;
  }
}

// y[r] = y[r] * row_scale[r] + bias, in place.
__attribute__((target_clones("avx512f", "avx2", "default"))) void rescale_rows(float* y, std::int64_t rows,
                                                                               std::int64_t cols, const float* scales,
                                                                               const float* bias) {
  for (std::int64_t r = 0; r < rows; ++r) {
    float* row = y + r * cols;
    const float s = scales[r];
    if (bias != nullptr) {
#pragma omp simd
      for (std::int64_t c = 0; c < cols; ++c) row[c] = row[c] * s + bias[c];
    } else {
#pragma omp simd
      for (std::int64_t c = 0; c < cols; ++c) row[c] *= s;
    }
  }
}

}  // namespace

void Int8Matmul::run_tile(const float* src, std::int64_t n, float* dst, Workspace& ws) const {
  const std::int64_t in = impl_->in, out = impl_->out;
  const float* bias = impl_->bias.empty() ? nullptr : impl_->bias.data();
  ws.q.resize(static_cast<std::size_t>(kTileRows * in));
  ws.scales.resize(static_cast<std::size_t>(kTileRows));
  quantize_activation_rows(src, n, in, ws.q.data(), ws.scales.data());
  if (n == kTileRows) {
    impl_->tile->run(ws.q.data(), dst, in, out);
  } else {  // 32-row tiles, the last zero-padded
    for (std::int64_t r = 0; r < n; r += kSmallTileRows) {
      const std::int64_t m = std::min(kSmallTileRows, n - r);
      std::int8_t* q = ws.q.data() + r * in;
      if (m == kSmallTileRows) {
        impl_->small_tile->run(q, dst + r * out, in, out);
        continue;
      }
      std::fill(q + m * in, q + kSmallTileRows * in, std::int8_t{0});
      ws.padded.resize(static_cast<std::size_t>(kSmallTileRows * out));
      impl_->small_tile->run(q, ws.padded.data(), in, out);
      std::memcpy(dst + r * out, ws.padded.data(), static_cast<std::size_t>(m * out) * sizeof(float));
    }
  }
  rescale_rows(dst, n, out, ws.scales.data(), bias);
}

void Int8Matmul::forward(const float* x, std::int64_t rows, float* y) const {
  const std::int64_t in = impl_->in, out = impl_->out;
  // Tile by tile, so each tile's rows are quantised, multiplied and rescaled while in cache.
  Workspace ws;
  for (std::int64_t r = 0; r < rows; r += kTileRows) {
    run_tile(x + r * in, std::min(kTileRows, rows - r), y + r * out, ws);
  }
}

}  // namespace newscls::bert
