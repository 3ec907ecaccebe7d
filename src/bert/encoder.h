// The BERT-style encoder and the two heads trained on it (classification, masked LM).
//
// Embeddings: token + learned position (+ an optional hashed character-bigram embedding,
// because Chinese words are mostly two characters), LayerNorm, dropout. Each layer is post-LN as in
// BERT: x = LN(x + drop(MHA(x))); x = LN(x + drop(W2 gelu(W1 x))). The classifier reads
// the [CLS] vector through a tanh pooler; the MLM head ties its decoder to the token
// embedding matrix.
//
//   Architecture arch{vocab_size, 4, 256, 4, 1024, 64, 0.1, 0.1};
//   auto rng = std::make_shared<MaskRng>(seed);
//   ClassifierModel model(arch, 10, rng);
//   EncoderOutput e = model->encoder->forward(ids, key_valid, /*keep_weights=*/true);
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <torch/torch.h>

#include "bert/attention.h"
#include "bert/fast_dropout.h"

namespace newscls::bert {

struct Architecture {
  std::int64_t vocab_size = 0;
  std::int64_t layers = 4, hidden = 256, heads = 4, ff = 1024, max_len = 64;
  double dropout = 0.1, attention_dropout = 0.1;
  std::int64_t bigram_buckets = 0;  // 0: no character-bigram embedding
};

// Hashed bucket of the character pair starting at each position; 0 where either token is
// special ([PAD], [CLS], [SEP], [MASK], [UNK]), so a masked character hides its bigrams too.
torch::Tensor bigram_buckets(const torch::Tensor& ids, std::int64_t vocab_size, std::int64_t buckets);

class EncoderLayerImpl : public torch::nn::Module {
 public:
  EncoderLayerImpl(const Architecture& arch, std::shared_ptr<MaskRng> rng);
  AttentionOutput forward(const torch::Tensor& x, const AttentionMask& mask);

 private:
  MultiHeadAttention attention_{nullptr};
  torch::nn::LayerNorm attention_norm_{nullptr}, output_norm_{nullptr};
  torch::nn::Linear intermediate_{nullptr}, output_{nullptr};
  FastDropout dropout_{nullptr};
};
TORCH_MODULE(EncoderLayer);

struct EncoderOutput {
  torch::Tensor hidden;                // (B, T, hidden)
  std::vector<torch::Tensor> weights;  // per layer (B, heads, T, T), when asked for
};

class EncoderImpl : public torch::nn::Module {
 public:
  EncoderImpl(const Architecture& arch, std::shared_ptr<MaskRng> rng);
  // ids int64 (B, T); key_valid bool (B, T), true at real tokens.
  EncoderOutput forward(const torch::Tensor& ids, const torch::Tensor& key_valid,
                        bool keep_weights = false);
  const Architecture& arch() const { return arch_; }
  torch::nn::Embedding token_embedding{nullptr};

 private:
  Architecture arch_;
  torch::nn::Embedding position_embedding_{nullptr};
  torch::nn::Embedding bigram_embedding_{nullptr};
  torch::nn::LayerNorm norm_{nullptr};
  FastDropout dropout_{nullptr};
  torch::nn::ModuleList layers_{nullptr};
};
TORCH_MODULE(Encoder);

class ClassifierModelImpl : public torch::nn::Module {
 public:
  ClassifierModelImpl(const Architecture& arch, std::int64_t num_classes,
                      std::shared_ptr<MaskRng> rng);
  // Logits (B, num_classes) from the [CLS] position.
  torch::Tensor forward(const torch::Tensor& ids, const torch::Tensor& key_valid);
  torch::Tensor head(const torch::Tensor& hidden);
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
  torch::Tensor forward(const torch::Tensor& ids, const torch::Tensor& key_valid,
                        const torch::Tensor& positions);
  Encoder encoder{nullptr};

 private:
  torch::nn::Linear transform_{nullptr};
  torch::nn::LayerNorm norm_{nullptr};
  torch::Tensor decoder_bias_;
};
TORCH_MODULE(MlmModel);

// BERT's initialisation: N(0, 0.02) for weights and embeddings, zero biases, unit norms.
void init_bert_weights(torch::nn::Module& module);

}  // namespace newscls::bert
