// Per-row symmetric int8 tensors: a Linear's output channels or an embedding table's rows,
// each row stored as int8 values times one f32 scale. Shared by the int8 GEMM (int8_gemm.h),
// the Linear twins that run it (quantized_linear.h) and the int8 payload (model/int8_payload.h).
//
//   Int8Rows q = quantize_rows(weight);    // q.values int8, q.scales f32 (rows)
//   torch::Tensor w = dequantize_rows(q);  // back to f32, the rows rounded to their scale
#pragma once

#include <torch/torch.h>

namespace newscls::bert {

struct Int8Rows {
  torch::Tensor values;  // int8, the tensor's shape
  torch::Tensor scales;  // f32 (rows,): row r is values[r] * scales[r]
};

// Symmetric per-row: scale = max|row| / 127 (an all-zero row gets scale 1 and zeros).
Int8Rows quantize_rows(const torch::Tensor& weight);
torch::Tensor dequantize_rows(const Int8Rows& q);

}  // namespace newscls::bert
