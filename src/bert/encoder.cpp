#include "bert/encoder.h"

#include "bert/vocab.h"
#include "newscls/error.h"

namespace newscls::bert {
namespace {

torch::nn::LayerNorm layer_norm(std::int64_t hidden) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({hidden}).eps(1e-12));
}

constexpr std::int64_t kBigramHash = 2654435761;  // Knuth's multiplicative hash

}  // namespace

torch::Tensor bigram_buckets(const torch::Tensor& ids, std::int64_t vocab_size, std::int64_t buckets) {
  torch::Tensor next = torch::constant_pad_nd(ids.slice(1, 1), {0, 1}, kPad);
  torch::Tensor mixed = (ids * vocab_size + next) * kBigramHash;
  torch::Tensor hashed = mixed.bitwise_xor(mixed.bitwise_right_shift(29)).remainder(buckets - 1) + 1;
  torch::Tensor real = (ids >= kNumSpecial).logical_and(next >= kNumSpecial);
  return hashed * real;
}

EncoderLayerImpl::EncoderLayerImpl(const Architecture& arch, std::shared_ptr<MaskRng> rng) {
  attention_ = register_module(
      "attention", MultiHeadAttention(arch.hidden, arch.heads, arch.attention_dropout, rng));
  attention_norm_ = register_module("attention_norm", layer_norm(arch.hidden));
  intermediate_ = register_module("intermediate", torch::nn::Linear(arch.hidden, arch.ff));
  output_ = register_module("output", torch::nn::Linear(arch.ff, arch.hidden));
  output_norm_ = register_module("output_norm", layer_norm(arch.hidden));
  dropout_ = register_module("dropout", FastDropout(arch.dropout, std::move(rng)));
}

AttentionOutput EncoderLayerImpl::forward(const torch::Tensor& x, const AttentionMask& mask) {
  AttentionOutput attended = attention_(x, mask);
  torch::Tensor h = attention_norm_(x + dropout_(attended.output));
  torch::Tensor ff = output_(torch::gelu(intermediate_(h)));
  return {output_norm_(h + dropout_(ff)), attended.weights};
}

EncoderImpl::EncoderImpl(const Architecture& arch, std::shared_ptr<MaskRng> rng) : arch_(arch) {
  if (arch.vocab_size <= 0) throw ConfigError("vocab", "empty vocabulary");
  token_embedding = register_module("token_embedding",
                                    torch::nn::Embedding(arch.vocab_size, arch.hidden));
  position_embedding_ = register_module("position_embedding",
                                        torch::nn::Embedding(arch.max_len, arch.hidden));
  if (arch.bigram_buckets > 1) {
    bigram_embedding_ = register_module(
        "bigram_embedding",
        torch::nn::Embedding(torch::nn::EmbeddingOptions(arch.bigram_buckets, arch.hidden).padding_idx(0).sparse(true)));
  }
  norm_ = register_module("norm", layer_norm(arch.hidden));
  dropout_ = register_module("dropout", FastDropout(arch.dropout, rng));
  layers_ = register_module("layers", torch::nn::ModuleList());
  for (std::int64_t i = 0; i < arch.layers; ++i) layers_->push_back(EncoderLayer(arch, rng));
}

EncoderOutput EncoderImpl::forward(const torch::Tensor& ids, const torch::Tensor& key_valid,
                                   bool keep_weights) {
  const std::int64_t t = ids.size(1);
  if (t > arch_.max_len) throw UsageError("sequence longer than max_len");
  torch::Tensor positions = torch::arange(t, torch::kInt64);
  torch::Tensor x = token_embedding(ids) + position_embedding_(positions).unsqueeze(0);
  if (bigram_embedding_) {
    x = x + bigram_embedding_(bigram_buckets(ids, arch_.vocab_size, arch_.bigram_buckets));
  }
  x = dropout_(norm_(x));
  AttentionMask mask = make_attention_mask(key_valid, t, /*causal=*/false);
  EncoderOutput out;
  for (const auto& layer : *layers_) {
    AttentionOutput r = layer->as<EncoderLayer>()->forward(x, mask);
    x = r.output;
    if (keep_weights) out.weights.push_back(r.weights);
  }
  out.hidden = x;
  return out;
}

ClassifierModelImpl::ClassifierModelImpl(const Architecture& arch, std::int64_t num_classes,
                                         std::shared_ptr<MaskRng> rng) {
  encoder = register_module("encoder", Encoder(arch, rng));
  pooler_ = register_module("pooler", torch::nn::Linear(arch.hidden, arch.hidden));
  classifier_ = register_module("classifier", torch::nn::Linear(arch.hidden, num_classes));
  dropout_ = register_module("dropout", FastDropout(arch.dropout, std::move(rng)));
  init_bert_weights(*this);
}

torch::Tensor ClassifierModelImpl::head(const torch::Tensor& hidden) {
  torch::Tensor cls = hidden.select(1, 0);
  return classifier_(dropout_(torch::tanh(pooler_(cls))));
}

torch::Tensor ClassifierModelImpl::forward(const torch::Tensor& ids, const torch::Tensor& key_valid) {
  return head(encoder(ids, key_valid).hidden);
}

MlmModelImpl::MlmModelImpl(Encoder enc, std::shared_ptr<MaskRng> rng) {
  const Architecture& arch = enc->arch();
  encoder = register_module("encoder", enc);
  transform_ = register_module("transform", torch::nn::Linear(arch.hidden, arch.hidden));
  norm_ = register_module("norm", layer_norm(arch.hidden));
  decoder_bias_ = register_parameter("decoder_bias", torch::zeros({arch.vocab_size}));
  torch::NoGradGuard no_grad;
  transform_->weight.normal_(0.0, 0.02);
  transform_->bias.zero_();
}

torch::Tensor MlmModelImpl::forward(const torch::Tensor& ids, const torch::Tensor& key_valid,
                                    const torch::Tensor& positions) {
  torch::Tensor hidden = encoder(ids, key_valid).hidden;
  torch::Tensor picked = hidden.reshape({-1, hidden.size(2)}).index_select(0, positions);
  torch::Tensor h = norm_(torch::gelu(transform_(picked)));
  return torch::addmm(decoder_bias_, h, encoder->token_embedding->weight.t());
}

void init_bert_weights(torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  for (auto& item : module.named_parameters()) {
    const std::string& name = item.key();
    torch::Tensor& p = item.value();
    const bool is_norm = name.find("norm") != std::string::npos;
    if (is_norm) {
      p.fill_(name.size() >= 6 && name.compare(name.size() - 6, 6, "weight") == 0 ? 1.0 : 0.0);
    } else if (p.dim() >= 2) {
      p.normal_(0.0, 0.02);
      if (name.find("bigram_embedding") != std::string::npos) p[0].zero_();  // the "no bigram" row
    } else {
      p.zero_();
    }
  }
}

}  // namespace newscls::bert
