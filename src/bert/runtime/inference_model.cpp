#include "bert/runtime/inference_model.h"

#include <malloc.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>

#include "bert/tokens/vocab.h"
#include "newscls/core/error.h"

namespace newscls::bert::runtime {
namespace {

class StateIndex {
 public:
  explicit StateIndex(const std::vector<NamedArray>& state) {
    for (const NamedArray& a : state) by_name_.emplace(a.name, &a);
  }
  const NamedArray& at(const std::string& name) const {
    const auto found = by_name_.find(name);
    if (found == by_name_.end()) throw UsageError("bert runtime: no tensor '" + name + "'");
    return *found->second;
  }
  Linear linear(const std::string& name) const { return make_linear(at(name + ".weight"), at(name + ".bias")); }
  Norm norm(const std::string& name) const {
    return {dequantized(at(name + ".weight")), dequantized(at(name + ".bias"))};
  }

 private:
  std::map<std::string, const NamedArray*> by_name_;
};

// Rows `first` of each title's T rows: B x cols.
Matrix first_rows(const Matrix& x, std::int64_t batch, std::int64_t t) {
  Matrix out(batch, x.cols);
  for (std::int64_t b = 0; b < batch; ++b) std::copy(x.row(b * t), x.row(b * t) + x.cols, out.row(b));
  return out;
}

// Columns [from, from + n) of x.
Matrix columns(const Matrix& x, std::int64_t from, std::int64_t n) {
  Matrix out(x.rows, n);
  for (std::int64_t r = 0; r < x.rows; ++r) std::copy(x.row(r) + from, x.row(r) + from + n, out.row(r));
  return out;
}

// dst += row `r` of an embedding table (n columns), f32 or int8 rows dequantised as LibTorch
// does (value * scale in f32, then the sum): the same floats as a dequantised table's.
void add_row(float* dst, const NamedArray& table, std::int64_t r, std::int64_t n) {
  if (table.int8.empty()) {
    const float* src = table.values.data() + r * n;
    for (std::int64_t c = 0; c < n; ++c) dst[c] += src[c];
    return;
  }
  const std::int8_t* q = table.int8.data() + r * n;
  const float scale = table.scales[static_cast<std::size_t>(r)];
  for (std::int64_t c = 0; c < n; ++c) dst[c] += static_cast<float>(q[c]) * scale;
}

}  // namespace

PaddedBatch pad_titles(const std::vector<std::vector<std::int64_t>>& encoded, const std::vector<std::size_t>& rows) {
  std::size_t t = 1;
  for (std::size_t r : rows) t = std::max(t, encoded.at(r).size());
  PaddedBatch b;
  b.size = static_cast<std::int64_t>(rows.size());
  b.length = static_cast<std::int64_t>(t);
  b.ids.assign(rows.size() * t, kPad);
  b.valid.assign(rows.size() * t, 0);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& e = encoded[rows[i]];
    std::copy(e.begin(), e.end(), b.ids.begin() + static_cast<std::ptrdiff_t>(i * t));
    std::fill_n(b.valid.begin() + static_cast<std::ptrdiff_t>(i * t), e.size(), std::uint8_t{1});
  }
  return b;
}

namespace {

// Every layer allocates its batch's activations afresh. glibc returned those buffers to the
// kernel on free and faulted them back in on the next allocation: 10,000 titles took 11.4 s
// (9.5 s of it in the kernel) against 4.6 s with freed memory kept for reuse
// (docs/BENCHMARKS.md). Process-wide, set once, by the first model built.
void keep_freed_memory_for_reuse() {
  static std::once_flag once;
  std::call_once(once, [] {
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_TOP_PAD, 64 << 20);
  });
}

}  // namespace

InferenceModel::InferenceModel(const Architecture& arch, std::int64_t num_classes,
                               std::shared_ptr<const std::vector<NamedArray>> state)
    : arch_(arch), classes_(num_classes), state_(std::move(state)) {
  keep_freed_memory_for_reuse();
  const StateIndex s(*state_);
  tokens_ = &s.at("encoder.token_embedding.weight");
  positions_ = &s.at("encoder.position_embedding.weight");
  if (arch.type_vocab_size > 0) token_type_ = &s.at("encoder.token_type_embedding.weight");
  if (arch.bigram_buckets > 1) bigrams_ = &s.at("encoder.bigram_embedding.weight");
  if (arch.trigram_buckets > 1) trigrams_ = &s.at("encoder.trigram_embedding.weight");
  norm_ = s.norm("encoder.norm");
  for (std::int64_t l = 0; l < arch.layers; ++l) {
    const std::string p = "encoder.layers." + std::to_string(l) + ".";
    Layer layer;
    layer.heads = layer_heads(arch, l);
    layer.query = s.linear(p + "attention.query");
    layer.key = s.linear(p + "attention.key");
    layer.value = s.linear(p + "attention.value");
    const NamedArray &qw = s.at(p + "attention.query.weight"), &kw = s.at(p + "attention.key.weight"),
                     &vw = s.at(p + "attention.value.weight");
    const bool int8 = !qw.int8.empty() && !kw.int8.empty() && !vw.int8.empty();
    std::vector<const NamedArray*> qkv_int8, kv_int8;
    if (int8) qkv_int8 = {&qw, &kw, &vw}, kv_int8 = {&kw, &vw};
    layer.qkv = stack_linears({&layer.query, &layer.key, &layer.value}, qkv_int8);
    layer.kv = stack_linears({&layer.key, &layer.value}, kv_int8);
    layer.attention_output = s.linear(p + "attention.output");
    layer.attention_norm = s.norm(p + "attention_norm");
    layer.intermediate = s.linear(p + "intermediate");
    layer.output = s.linear(p + "output");
    layer.output_norm = s.norm(p + "output_norm");
    layers_.push_back(std::move(layer));
  }
  if (arch.pooler) pooler_ = s.linear("pooler");
  if (num_classes > 0) classifier_ = s.linear("classifier");
}

Matrix InferenceModel::embed(const PaddedBatch& batch) const {
  const std::int64_t h = arch_.hidden, t = batch.length;
  if (t > arch_.max_len) throw UsageError("sequence longer than max_len");
  Matrix x(batch.size * t, h);
  std::vector<std::int64_t> bigram(static_cast<std::size_t>(t)), trigram(static_cast<std::size_t>(t));
  for (std::int64_t b = 0; b < batch.size; ++b) {
    const std::int64_t* ids = batch.ids.data() + b * t;
    if (bigrams_ != nullptr) ngram_buckets_of_row(ids, t, arch_.vocab_size, arch_.bigram_buckets, 2, bigram.data());
    if (trigrams_ != nullptr) ngram_buckets_of_row(ids, t, arch_.vocab_size, arch_.trigram_buckets, 3, trigram.data());
    for (std::int64_t j = 0; j < t; ++j) {
      if (ids[j] < 0 || ids[j] >= arch_.vocab_size) throw UsageError("token id outside the vocabulary");
      float* row = x.row(b * t + j);
      // In the LibTorch encoder's order: token + position, then type 0, bigram, trigram.
      add_row(row, *tokens_, ids[j], h);  // x starts at zeros: 0 + tok is tok
      add_row(row, *positions_, j, h);
      if (token_type_ != nullptr) add_row(row, *token_type_, 0, h);
      if (bigrams_ != nullptr) add_row(row, *bigrams_, bigram[static_cast<std::size_t>(j)], h);
      if (trigrams_ != nullptr) add_row(row, *trigrams_, trigram[static_cast<std::size_t>(j)], h);
    }
  }
  layer_norm(x, norm_, arch_.layer_norm_eps);
  return x;
}

Matrix InferenceModel::run_layer(const Layer& layer, const Matrix& x, const PaddedBatch& batch, bool first_only,
                                 Matrix* weights) const {
  const std::int64_t inner = layer.query.out, t = batch.length;
  Matrix q, k, v;
  Matrix h = first_only ? first_rows(x, batch.size, t) : Matrix();
  if (first_only) {
    q = layer.query.apply(h);
    const Matrix kv = layer.kv.apply(x);
    k = columns(kv, 0, inner), v = columns(kv, inner, inner);
  } else {
    const Matrix qkv = layer.qkv.apply(x);
    q = columns(qkv, 0, inner), k = columns(qkv, inner, inner), v = columns(qkv, 2 * inner, inner);
  }
  const Matrix context = attend(q, k, v, batch, layer.heads, first_only ? 1 : t, weights);
  Matrix attended = layer.attention_output.apply(context);
  if (!first_only) h = x;
  for (std::size_t i = 0; i < h.values.size(); ++i) h.values[i] += attended.values[i];
  layer_norm(h, layer.attention_norm, arch_.layer_norm_eps);
  Matrix inner_act = layer.intermediate.apply(h);
  gelu(inner_act);
  const Matrix ff = layer.output.apply(inner_act);
  for (std::size_t i = 0; i < h.values.size(); ++i) h.values[i] += ff.values[i];
  layer_norm(h, layer.output_norm, arch_.layer_norm_eps);
  return h;
}

EncoderPass InferenceModel::encode(const PaddedBatch& batch, bool keep_weights, bool cls_only) const {
  EncoderPass pass;
  Matrix x = embed(batch);
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    const bool first_only = cls_only && !keep_weights && i + 1 == layers_.size();
    Matrix w;
    x = run_layer(layers_[i], x, batch, first_only, keep_weights ? &w : nullptr);
    pass.heads.push_back(layers_[i].heads);
    if (keep_weights) pass.weights.push_back(std::move(w));
  }
  pass.hidden = std::move(x);
  return pass;
}

Matrix InferenceModel::cls(const EncoderPass& pass, const PaddedBatch& batch) const {
  if (pass.hidden.rows == batch.size) return pass.hidden;  // a cls_only pass (or one position per title)
  return first_rows(pass.hidden, batch.size, batch.length);
}

Matrix InferenceModel::pooled(const Matrix& cls) const {
  if (!has_pooler()) throw UsageError("this encoder has no pooler");
  Matrix p = pooler_.apply(cls);
  tanh_in_place(p);
  return p;
}

Matrix InferenceModel::logits(const Matrix& cls) const {
  if (!has_classifier()) throw UsageError("this encoder has no classifier head");
  return classifier_.apply(pooled(cls));
}

Matrix InferenceModel::head_probs(const Matrix& cls) const {
  Matrix p = logits(cls);
  softmax_rows(p);
  return p;
}

Matrix InferenceModel::probs(const PaddedBatch& batch) const {
  return head_probs(cls(encode(batch, /*keep_weights=*/false, /*cls_only=*/true), batch));
}

}  // namespace newscls::bert::runtime
