// The int8 GEMM (int8_matmul.h) on LibTorch tensors, for the int8 twins of LibTorch Linears
// (quantized_linear.h): y = x W^T + b with W stored as int8 rows, x quantised per row per call.
//
//   Int8Gemm gemm(q8 /*Int8Rows of W (out, in)*/, bias);   // bias may be undefined
//   torch::Tensor y = gemm.forward(x);                      // x (..., in) f32 -> (..., out)
#pragma once

#include <cstdint>
#include <memory>

#include <torch/torch.h>

#include "bert/kernels/int8_matmul.h"
#include "bert/kernels/int8_rows.h"

namespace newscls::bert {

class Int8Gemm {
 public:
  static constexpr std::int64_t kTileRows = Int8Matmul::kTileRows;
  static constexpr std::int64_t kSmallTileRows = Int8Matmul::kSmallTileRows;

  Int8Gemm(const Int8Rows& weight, const torch::Tensor& bias);

  // Thread-safe: the primitives and weights are only read.
  torch::Tensor forward(const torch::Tensor& x) const;

 private:
  std::unique_ptr<Int8Matmul> matmul_;
};

}  // namespace newscls::bert
