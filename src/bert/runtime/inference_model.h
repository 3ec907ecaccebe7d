// The bert classifier's forward pass for inference, without LibTorch: the same model as
// model/encoder.h's ClassifierModel (embeddings with the hashed n-gram tables, post-LN layers
// with per-layer head counts, tanh pooler over [CLS], classifier), read from a bundle's float
// or int8 payload (state_payload.h), its int8-stored Linears run by the int8 GEMM as the
// LibTorch twins run them. Only read once built: threads may share one.
//
//   InferenceModel m(arch, num_classes, read_float_state(path, expected_state(arch, num_classes)));
//   InferenceModel shared(arch, num_classes, state_ptr);   // reads the tables where they lie
//   PaddedBatch batch = pad_titles(encoded, rows);
//   Matrix probs = m.probs(batch);                       // B x classes
//   EncoderPass pass = m.encode(batch, /*keep_weights=*/true, /*cls_only=*/false);
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "bert/model/architecture.h"
#include "bert/runtime/matrix.h"
#include "bert/runtime/ops.h"
#include "bert/model/state_payload.h"

namespace newscls::bert::runtime {

// The titles encoded[rows[i]] padded to the longest of them, as tokens/batching.h's make_batch.
PaddedBatch pad_titles(const std::vector<std::vector<std::int64_t>>& encoded, const std::vector<std::size_t>& rows);

struct EncoderPass {
  Matrix hidden;                    // (B*T) x hidden, or B x hidden ([CLS] only) with cls_only
  std::vector<Matrix> weights;      // per layer (B*heads_l*T) x T, when asked for
  std::vector<std::int64_t> heads;  // per layer
};

class InferenceModel {
 public:
  // state: expected_state(arch, num_classes)'s tensors, in its order. The model keeps the state
  // and reads its embedding tables in place (int8 ones row by row): no copy of the largest tensors.
  InferenceModel(const Architecture& arch, std::int64_t num_classes,
                 std::shared_ptr<const std::vector<NamedArray>> state);
  InferenceModel(const Architecture& arch, std::int64_t num_classes, std::vector<NamedArray> state)
      : InferenceModel(arch, num_classes, std::make_shared<const std::vector<NamedArray>>(std::move(state))) {}

  // With cls_only (and no weights kept) the last layer computes the [CLS] position alone.
  EncoderPass encode(const PaddedBatch& batch, bool keep_weights, bool cls_only) const;
  // The [CLS] rows (B x hidden) of a pass.
  Matrix cls(const EncoderPass& pass, const PaddedBatch& batch) const;
  // tanh(W cls + b); needs has_pooler().
  Matrix pooled(const Matrix& cls) const;
  // Logits (B x classes) from the [CLS] rows; needs has_classifier().
  Matrix logits(const Matrix& cls) const;
  // Their softmax.
  Matrix head_probs(const Matrix& cls) const;
  Matrix probs(const PaddedBatch& batch) const;

  bool has_pooler() const { return arch_.pooler; }
  bool has_classifier() const { return classes_ > 0; }
  const Architecture& arch() const { return arch_; }

 private:
  struct Layer {
    std::int64_t heads = 0;
    Linear query, key, value, qkv, kv, attention_output, intermediate, output;
    Norm attention_norm, output_norm;
  };
  Matrix embed(const PaddedBatch& batch) const;
  Matrix run_layer(const Layer& layer, const Matrix& x, const PaddedBatch& batch, bool first_only,
                   Matrix* weights) const;

  Architecture arch_;
  std::int64_t classes_ = 0;
  std::shared_ptr<const std::vector<NamedArray>> state_;
  // The embedding tables, in state_ (f32 or int8 rows); null when the architecture has none.
  const NamedArray *tokens_ = nullptr, *positions_ = nullptr, *token_type_ = nullptr, *bigrams_ = nullptr,
                   *trigrams_ = nullptr;
  Norm norm_;
  std::vector<Layer> layers_;
  Linear pooler_, classifier_;
};

}  // namespace newscls::bert::runtime
