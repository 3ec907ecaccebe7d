// The BERT-style encoder and the two heads trained on it (classification, masked LM).
//
// Embeddings: token + learned position (+ optional hashed character-bigram and -trigram
// embeddings, because Chinese words are mostly two or three characters), LayerNorm, dropout. Each layer is post-LN as
// in BERT: x = LN(x + drop(MHA(x))); x = LN(x + drop(W2 gelu(W1 x))). The classifier reads the [CLS] vector through a
// tanh pooler; the MLM head ties its decoder to the token embedding matrix.
//
//   Architecture arch{vocab_size, 2, 256, 4, 512, 64, 0.1, 0.1, 32768};
//   auto rng = std::make_shared<MaskRng>(seed);
//   ClassifierModel model(arch, 10, rng);
//   EncoderOutput e = model->encoder->forward(ids, key_valid, /*keep_weights=*/true);
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <torch/torch.h>

#include "bert/model/architecture.h"
#include "bert/model/attention.h"
#include "bert/model/fast_dropout.h"

namespace newscls::bert {

// Hashed bucket of the `order` characters starting at each position; 0 where any of them is
// special ([PAD], [CLS], [SEP], [MASK], [UNK]), so a masked character hides its n-grams too.
torch::Tensor ngram_buckets(const torch::Tensor& ids, std::int64_t vocab_size, std::int64_t buckets, int order);

class EncoderLayerImpl : public torch::nn::Module {
 public:
  // index: the layer's position, which tells its head count (layer_heads).
  EncoderLayerImpl(const Architecture& arch, std::shared_ptr<MaskRng> rng, std::int64_t index = 0);
  // With first_only, the output is position 0's alone (B, 1, hidden).
  AttentionOutput forward(const torch::Tensor& x, const AttentionMask& mask, bool first_only = false);
  MultiHeadAttention& attention() { return attention_; }

 private:
  MultiHeadAttention attention_{nullptr};
  torch::nn::LayerNorm attention_norm_{nullptr}, output_norm_{nullptr};
  torch::nn::Linear intermediate_{nullptr}, output_{nullptr};
  FastDropout dropout_{nullptr};
};
TORCH_MODULE(EncoderLayer);

struct EncoderOutput {
  torch::Tensor hidden;                // (B, T, hidden), or (B, 1, hidden) with cls_only
  std::vector<torch::Tensor> weights;  // per layer (B, heads, T, T), when asked for
};

class EncoderImpl : public torch::nn::Module {
 public:
  EncoderImpl(const Architecture& arch, std::shared_ptr<MaskRng> rng);
  // ids int64 (B, T); key_valid bool (B, T), true at real tokens. With cls_only (and no
  // weights kept) the last layer computes the [CLS] position alone: hidden is (B, 1, hidden),
  // equal to the full pass's position 0, at about 60% of the cost for two layers.
  EncoderOutput forward(const torch::Tensor& ids, const torch::Tensor& key_valid, bool keep_weights = false,
                        bool cls_only = false);
  const Architecture& arch() const { return arch_; }
  // Stops gradients to the embeddings (tables and their LayerNorm) and the first `layers`
  // layers, so fine-tuning leaves them bit-identical and skips their backward pass.
  void freeze(std::int64_t layers);
  // One float mask (heads of the layer) per layer, see MultiHeadAttentionImpl::set_head_mask;
  // an empty vector removes them.
  void set_head_masks(const std::vector<torch::Tensor>& masks);
  torch::nn::Embedding token_embedding{nullptr};

 private:
  Architecture arch_;
  torch::nn::Embedding position_embedding_{nullptr}, token_type_embedding_{nullptr};
  torch::nn::Embedding bigram_embedding_{nullptr}, trigram_embedding_{nullptr};
  torch::nn::LayerNorm norm_{nullptr};
  FastDropout dropout_{nullptr};
  torch::nn::ModuleList layers_{nullptr};
};
TORCH_MODULE(Encoder);

class ClassifierModelImpl : public torch::nn::Module {
 public:
  // num_classes 0: an encoder without a classifier (an imported pretraining checkpoint),
  // good for embeddings and attention but not for logits.
  ClassifierModelImpl(const Architecture& arch, std::int64_t num_classes, std::shared_ptr<MaskRng> rng);
  // Logits (B, num_classes) from the [CLS] position.
  torch::Tensor forward(const torch::Tensor& ids, const torch::Tensor& key_valid);
  torch::Tensor head(const torch::Tensor& hidden);
  // tanh(W cls + b) of the [CLS] vectors (B, hidden); needs has_pooler().
  torch::Tensor pooled(const torch::Tensor& cls);
  bool has_pooler() const { return !pooler_.is_empty(); }
  bool has_classifier() const { return !classifier_.is_empty(); }
  Encoder encoder{nullptr};

 private:
  torch::nn::Linear pooler_{nullptr}, classifier_{nullptr};
  FastDropout dropout_{nullptr};
};
TORCH_MODULE(ClassifierModel);

class MlmModelImpl : public torch::nn::Module {
 public:
  MlmModelImpl(Encoder encoder, std::shared_ptr<MaskRng> rng);
  // Vocabulary logits at the selected flat positions (index into B*T).
  torch::Tensor forward(const torch::Tensor& ids, const torch::Tensor& key_valid, const torch::Tensor& positions);
  Encoder encoder{nullptr};

 private:
  torch::nn::Linear transform_{nullptr};
  torch::nn::LayerNorm norm_{nullptr};
  torch::Tensor decoder_bias_;
};
TORCH_MODULE(MlmModel);

// BERT's initialisation: N(0, 0.02) for weights and embeddings, zero biases, unit norms,
// zero padding rows.
void init_bert_weights(torch::nn::Module& module);

}  // namespace newscls::bert
