// Batched products of attention at inference, run as one oneDNN matmul per call instead of
// LibTorch 1.13's CPU bmm, which multiplies each (title, head) pair in turn (a select and a
// GEMM call each: 8,000 of them for 2,048 titles of 4 heads, 30% of a predict run's time).
// Any strides are read in place, so the heads' transposes cost no copies, and the output can be
// written straight into the layout the next step wants.
//
//   torch::Tensor s = batched_matmul(q, k.transpose(-2, -1));          // (..., T, d) x (..., d, T)
//   batched_matmul_into(weights, v, context.view(...).transpose(1, 2)); // writes through strides
#pragma once

#include <torch/torch.h>

namespace newscls::bert {

// a (..., M, K) x b (..., K, N) -> (..., M, N) contiguous: oneDNN where
// batched_matmul_applies, else torch::matmul (training, one title's few products).
torch::Tensor batched_matmul(const torch::Tensor& a, const torch::Tensor& b);

// Same product written into `out` (..., M, N), which may be strided (e.g. a transposed view);
// only where batched_matmul_applies (throws UsageError otherwise).
void batched_matmul_into(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& out);

// Whether the oneDNN path applies: f32 CPU tensors with no gradient to track, and at least 32
// products (8 titles of 4 heads).
bool batched_matmul_applies(const torch::Tensor& a, const torch::Tensor& b);

}  // namespace newscls::bert
