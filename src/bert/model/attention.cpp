#include "bert/model/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "bert/kernels/batched_matmul.h"
#include "bert/kernels/quantized_linear.h"
#include "newscls/core/error.h"

namespace newscls::bert {

AttentionMask make_attention_mask(const torch::Tensor& key_valid, std::int64_t t_q, bool causal) {
  AttentionMask mask;
  torch::Tensor allowed;
  if (key_valid.defined()) {
    if (key_valid.dim() != 2) throw UsageError("attention key mask must be (batch, keys)");
    allowed = key_valid.to(torch::kBool).unsqueeze(1).unsqueeze(1);  // (B,1,1,Tk)
  }
  if (causal) {
    const std::int64_t t_k = key_valid.defined() ? key_valid.size(1) : t_q;
    torch::Tensor lower = torch::ones({t_q, t_k}, torch::kBool).tril();
    allowed = allowed.defined() ? allowed.logical_and(lower) : lower.view({1, 1, t_q, t_k});
  }
  if (!allowed.defined()) return mask;
  torch::Tensor any = allowed.any(-1, /*keepdim=*/true);
  if (!any.all().item<bool>()) {
    // Let empty rows attend uniformly (finite softmax), then zero them via row_valid.
    allowed = allowed.logical_or(any.logical_not());
    mask.row_valid = any.to(torch::kFloat32);
  }
  mask.bias = torch::zeros(allowed.sizes(), torch::kFloat32)
                  .masked_fill_(allowed.logical_not(), -std::numeric_limits<float>::infinity());
  return mask;
}

torch::Tensor attention_scores(const torch::Tensor& q, const torch::Tensor& k, bool scale) {
  torch::Tensor scores = batched_matmul(q, k.transpose(-2, -1));
  if (scale) scores.div_(std::sqrt(static_cast<double>(q.size(-1))));
  return scores;
}

AttentionOutput scaled_dot_product_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                             const AttentionMask& mask, bool scale, FastDropout* dropout) {
  torch::Tensor scores = attention_scores(q, k, scale);
  if (mask.bias.defined()) scores = scores + mask.bias;
  torch::Tensor weights = torch::softmax(scores, -1);
  if (mask.row_valid.defined()) weights = weights * mask.row_valid;
  torch::Tensor used = dropout != nullptr ? (*dropout)(weights) : weights;
  if (used.dim() != 4 || !batched_matmul_applies(used, v)) return {batched_matmul(used, v), weights};
  // (B, heads, T, d) written as a view of (B, T, heads, d): joining the heads is then free.
  torch::Tensor out = torch::empty({used.size(0), used.size(2), used.size(1), v.size(3)}, v.options()).transpose(1, 2);
  batched_matmul_into(used, v, out);
  return {out, weights};
}

MultiHeadAttentionImpl::MultiHeadAttentionImpl(std::int64_t hidden, std::int64_t heads, double attention_dropout,
                                               std::shared_ptr<MaskRng> rng, std::int64_t d_head)
    : hidden_(hidden), heads_(heads), d_head_(d_head > 0 ? d_head : hidden / std::max<std::int64_t>(heads, 1)) {
  if (heads <= 0 || (d_head <= 0 && hidden % heads != 0)) {
    throw ConfigError("heads", "hidden must be a multiple of heads");
  }
  const std::int64_t inner = heads_ * d_head_;
  query_ = register_module("query", torch::nn::Linear(hidden, inner));
  key_ = register_module("key", torch::nn::Linear(hidden, inner));
  value_ = register_module("value", torch::nn::Linear(hidden, inner));
  output_ = register_module("output", torch::nn::Linear(inner, hidden));
  dropout_ = register_module("dropout", FastDropout(attention_dropout, std::move(rng)));
}

void MultiHeadAttentionImpl::stack_int8_projections() {
  qkv_int8_ = nullptr;
  kv_int8_ = nullptr;
  Int8LinearImpl *q = int8_twin(query_), *k = int8_twin(key_), *v = int8_twin(value_);
  if (q == nullptr || k == nullptr || v == nullptr || !q->stackable()) return;
  qkv_int8_ = stack_int8_twins({q, k, v});
  kv_int8_ = stack_int8_twins({k, v});
}

torch::Tensor MultiHeadAttentionImpl::split_heads(const torch::Tensor& x) const {
  return x.view({x.size(0), x.size(1), heads_, d_head_}).transpose(1, 2);
}

AttentionOutput MultiHeadAttentionImpl::forward(const torch::Tensor& x, const AttentionMask& mask, bool first_only) {
  if (first_only && mask.bias.defined() && mask.bias.size(2) != 1) {
    throw UsageError("first-position attention needs a mask that does not depend on the query");
  }
  const torch::Tensor queries = first_only ? x.slice(1, 0, 1) : x;
  const std::int64_t inner = heads_ * d_head_;
  torch::Tensor q, k, v;
  if (qkv_int8_ && !first_only) {
    const torch::Tensor qkv = qkv_int8_(x);
    q = qkv.narrow(-1, 0, inner), k = qkv.narrow(-1, inner, inner), v = qkv.narrow(-1, 2 * inner, inner);
  } else if (kv_int8_) {
    const torch::Tensor kv = kv_int8_(x);
    q = run_linear(query_, queries), k = kv.narrow(-1, 0, inner), v = kv.narrow(-1, inner, inner);
  } else {
    q = run_linear(query_, queries), k = run_linear(key_, x), v = run_linear(value_, x);
  }
  q = split_heads(q), k = split_heads(k), v = split_heads(v);
  AttentionOutput heads = scaled_dot_product_attention(q, k, v, mask, true, &dropout_);
  const torch::Tensor per_head =
      head_mask_.defined() ? heads.output * head_mask_.view({1, heads_, 1, 1}) : heads.output;
  torch::Tensor concat = per_head.transpose(1, 2).reshape({x.size(0), queries.size(1), heads_ * d_head_});
  return {run_linear(output_, concat), heads.weights};
}

}  // namespace newscls::bert
