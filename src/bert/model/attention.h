// Scaled dot-product and multi-head self-attention, written out step by step as the
// lecture teaches, so the weights are there for inspection and dumps.
//
//   scores  = Q K^T / sqrt(d_k)               (T_q x T_k per head)
//   scores += mask bias (0 where allowed, -inf at padded keys / future positions)
//   A       = softmax(scores) over the keys;   O = A V
//
// A query row with no allowed key at all (an empty sequence, say) would be softmax over
// all -inf, i.e. NaN; such rows get all-zero weights and a zero output instead.
//
//   AttentionMask m = make_attention_mask(key_valid /*(B,T) bool*/, T, /*causal=*/false);
//   AttentionOutput r = scaled_dot_product_attention(q, k, v, m);   // r.output, r.weights
#pragma once

#include <cstdint>
#include <memory>

#include <torch/torch.h>

#include "bert/kernels/quantized_linear.h"
#include "bert/model/fast_dropout.h"

namespace newscls::bert {

// Built once per batch and handed to every layer.
struct AttentionMask {
  // Float, broadcastable to (B, heads, T_q, T_k): 0 where attending is allowed, -inf
  // elsewhere. Undefined means "attend everywhere".
  torch::Tensor bias;
  // Float (B, 1, T_q, 1), 1 for rows with at least one allowed key, 0 for the others;
  // defined only when some row has none.
  torch::Tensor row_valid;
};

// key_valid: bool (B, T_k), true at real tokens; may be undefined (no padding).
// causal additionally forbids key positions after the query position (T_q == T_k).
AttentionMask make_attention_mask(const torch::Tensor& key_valid, std::int64_t t_q, bool causal);

// Q K^T, divided by sqrt(d_k) when scale is set: (..., T_q, d_k) x (..., T_k, d_k).
torch::Tensor attention_scores(const torch::Tensor& q, const torch::Tensor& k, bool scale);

struct AttentionOutput {
  torch::Tensor output;   // (..., T_q, d_v)
  torch::Tensor weights;  // (..., T_q, T_k), rows sum to 1 (0 for fully masked rows)
};

// q (..., T_q, d_k), k (..., T_k, d_k), v (..., T_k, d_v). dropout, when given, applies to
// the weights used for the output; the returned weights are the undropped ones.
AttentionOutput scaled_dot_product_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                             const AttentionMask& mask, bool scale = true,
                                             FastDropout* dropout = nullptr);

// Multi-head self-attention: three linear maps to Q, K, V, heads split into a
// (B, heads, T, d_head) tensor, attention per head, heads concatenated, output projection.
// A pruned layer keeps its head width (d_head > 0) with fewer heads: Q/K/V map hidden to
// heads * d_head, the output projection maps that back to hidden.
class MultiHeadAttentionImpl : public torch::nn::Module {
 public:
  MultiHeadAttentionImpl(std::int64_t hidden, std::int64_t heads, double attention_dropout,
                         std::shared_ptr<MaskRng> rng, std::int64_t d_head = 0);
  // x (B, T, hidden) -> output (B, T, hidden), weights (B, heads, T, T). With first_only,
  // only position 0 queries (keys and values still span all T): output (B, 1, hidden),
  // weights (B, heads, 1, T); the mask must then not be causal.
  AttentionOutput forward(const torch::Tensor& x, const AttentionMask& mask, bool first_only = false);
  // Scales each head's output by mask[h] (float, heads) before the output projection, as in
  // Michel et al. (2019); undefined (the default) leaves them alone.
  void set_head_mask(torch::Tensor mask) { head_mask_ = std::move(mask); }
  std::int64_t heads() const { return heads_; }
  // Once Q, K and V have int8 twins that can be stacked, one GEMM over their stacked rows
  // (K and V only for a first-position-only pass) quantises the input once instead of three
  // times; the outputs are the same. Call again after re-attaching twins.
  void stack_int8_projections();

 private:
  torch::Tensor split_heads(const torch::Tensor& x) const;
  std::int64_t hidden_, heads_, d_head_;
  torch::Tensor head_mask_;
  torch::nn::Linear query_{nullptr}, key_{nullptr}, value_{nullptr}, output_{nullptr};
  Int8Linear qkv_int8_{nullptr}, kv_int8_{nullptr};  // stacked twins; not submodules
  FastDropout dropout_{nullptr};
};
TORCH_MODULE(MultiHeadAttention);

}  // namespace newscls::bert
