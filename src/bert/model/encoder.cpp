#include "bert/model/encoder.h"

#include <algorithm>
#include <cstdint>

#include "bert/kernels/quantized_linear.h"
#include "bert/tokens/vocab.h"
#include "newscls/core/error.h"

namespace newscls::bert {
namespace {

torch::nn::LayerNorm layer_norm(const Architecture& arch) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({arch.hidden}).eps(arch.layer_norm_eps));
}

// A sparse table whose row 0 stands for "no n-gram here" (kept at zero by padding_idx).
torch::nn::Embedding hashed_table(std::int64_t rows, std::int64_t hidden) {
  return torch::nn::Embedding(torch::nn::EmbeddingOptions(rows, hidden).padding_idx(0).sparse(true));
}

}  // namespace

torch::Tensor ngram_buckets(const torch::Tensor& ids, std::int64_t vocab_size, std::int64_t buckets, int order) {
  if (ids.dim() != 2 || buckets < 2 || order < 2 || vocab_size < 1) {
    throw UsageError("ngram_buckets needs (batch, length) ids, 2 or more buckets and order 2 or more");
  }
  const torch::Tensor in = ids.to(torch::kInt64).contiguous();
  torch::Tensor out = torch::zeros_like(in);
  const std::int64_t rows = in.size(0), t = in.size(1);
  const std::int64_t* src = in.data_ptr<std::int64_t>();
  std::int64_t* dst = out.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < rows; ++i) ngram_buckets_of_row(src + i * t, t, vocab_size, buckets, order, dst + i * t);
  return out;
}

EncoderLayerImpl::EncoderLayerImpl(const Architecture& arch, std::shared_ptr<MaskRng> rng, std::int64_t index) {
  attention_ = register_module("attention", MultiHeadAttention(arch.hidden, layer_heads(arch, index),
                                                               arch.attention_dropout, rng, arch.hidden / arch.heads));
  attention_norm_ = register_module("attention_norm", layer_norm(arch));
  intermediate_ = register_module("intermediate", torch::nn::Linear(arch.hidden, arch.ff));
  output_ = register_module("output", torch::nn::Linear(arch.ff, arch.hidden));
  output_norm_ = register_module("output_norm", layer_norm(arch));
  dropout_ = register_module("dropout", FastDropout(arch.dropout, std::move(rng)));
}

AttentionOutput EncoderLayerImpl::forward(const torch::Tensor& x, const AttentionMask& mask, bool first_only) {
  AttentionOutput attended = attention_(x, mask, first_only);
  const torch::Tensor residual = first_only ? x.slice(1, 0, 1) : x;
  torch::Tensor h = attention_norm_(residual + dropout_(attended.output));
  torch::Tensor ff = run_linear(output_, torch::gelu(run_linear(intermediate_, h)));
  return {output_norm_(h + dropout_(ff)), attended.weights};
}

EncoderImpl::EncoderImpl(const Architecture& arch, std::shared_ptr<MaskRng> rng) : arch_(arch) {
  if (arch.vocab_size <= 0) throw ConfigError("vocab", "empty vocabulary");
  token_embedding = register_module("token_embedding", torch::nn::Embedding(arch.vocab_size, arch.hidden));
  const std::int64_t positions = arch.positions > 0 ? arch.positions : arch.max_len;
  if (positions < arch.max_len) throw ConfigError("max_len", "exceeds the position table's rows");
  position_embedding_ = register_module("position_embedding", torch::nn::Embedding(positions, arch.hidden));
  if (arch.type_vocab_size > 0) {
    token_type_embedding_ =
        register_module("token_type_embedding", torch::nn::Embedding(arch.type_vocab_size, arch.hidden));
  }
  if (arch.bigram_buckets > 1) {
    bigram_embedding_ = register_module("bigram_embedding", hashed_table(arch.bigram_buckets, arch.hidden));
  }
  if (arch.trigram_buckets > 1) {
    trigram_embedding_ = register_module("trigram_embedding", hashed_table(arch.trigram_buckets, arch.hidden));
  }
  norm_ = register_module("norm", layer_norm(arch));
  dropout_ = register_module("dropout", FastDropout(arch.dropout, rng));
  layers_ = register_module("layers", torch::nn::ModuleList());
  if (!arch.heads_per_layer.empty() && static_cast<std::int64_t>(arch.heads_per_layer.size()) != arch.layers) {
    throw ConfigError("heads_per_layer", "needs one head count per layer");
  }
  for (std::int64_t i = 0; i < arch.layers; ++i) layers_->push_back(EncoderLayer(arch, rng, i));
}

EncoderOutput EncoderImpl::forward(const torch::Tensor& ids, const torch::Tensor& key_valid, bool keep_weights,
                                   bool cls_only) {
  const std::int64_t t = ids.size(1);
  if (t > arch_.max_len) throw UsageError("sequence longer than max_len");
  torch::Tensor positions = torch::arange(t, torch::kInt64);
  torch::Tensor x = token_embedding(ids) + position_embedding_(positions).unsqueeze(0);
  // Titles are single segments: token type 0 everywhere, as transformers does by default.
  if (token_type_embedding_) x = x + token_type_embedding_->weight[0];
  if (bigram_embedding_) {
    x = x + bigram_embedding_(ngram_buckets(ids, arch_.vocab_size, arch_.bigram_buckets, 2));
  }
  if (trigram_embedding_) {
    x = x + trigram_embedding_(ngram_buckets(ids, arch_.vocab_size, arch_.trigram_buckets, 3));
  }
  x = dropout_(norm_(x));
  AttentionMask mask = make_attention_mask(key_valid, t, /*causal=*/false);
  EncoderOutput out;
  for (std::size_t i = 0; i < layers_->size(); ++i) {
    const bool first_only = cls_only && !keep_weights && i + 1 == layers_->size();
    AttentionOutput r = layers_[i]->as<EncoderLayer>()->forward(x, mask, first_only);
    x = r.output;
    if (keep_weights) out.weights.push_back(r.weights);
  }
  out.hidden = x;
  return out;
}

void EncoderImpl::freeze(std::int64_t layers) {
  for (auto& p : named_parameters(/*recurse=*/true)) {
    const std::string& name = p.key();
    bool frozen = name.rfind("layers.", 0) != 0;  // the embeddings and their norm
    if (!frozen) frozen = std::stoll(name.substr(7, name.find('.', 7) - 7)) < layers;
    if (frozen) p.value().set_requires_grad(false);
  }
}

void EncoderImpl::set_head_masks(const std::vector<torch::Tensor>& masks) {
  if (!masks.empty() && masks.size() != layers_->size()) throw UsageError("one head mask per layer");
  for (std::size_t i = 0; i < layers_->size(); ++i) {
    layers_[i]->as<EncoderLayer>()->attention()->set_head_mask(masks.empty() ? torch::Tensor() : masks[i]);
  }
}

ClassifierModelImpl::ClassifierModelImpl(const Architecture& arch, std::int64_t num_classes,
                                         std::shared_ptr<MaskRng> rng) {
  encoder = register_module("encoder", Encoder(arch, rng));
  if (num_classes > 0 && !arch.pooler) throw ConfigError("pooler", "a classifier reads the pooler's output");
  if (arch.pooler) pooler_ = register_module("pooler", torch::nn::Linear(arch.hidden, arch.hidden));
  if (num_classes > 0) {
    classifier_ = register_module("classifier", torch::nn::Linear(arch.hidden, num_classes));
  }
  dropout_ = register_module("dropout", FastDropout(arch.dropout, std::move(rng)));
  init_bert_weights(*this);
}

torch::Tensor ClassifierModelImpl::pooled(const torch::Tensor& cls) {
  if (!has_pooler()) throw UsageError("this encoder has no pooler");
  return torch::tanh(run_linear(pooler_, cls));
}

torch::Tensor ClassifierModelImpl::head(const torch::Tensor& hidden) {
  if (!has_classifier()) throw UsageError("this encoder has no classifier head");
  return run_linear(classifier_, dropout_(pooled(hidden.select(1, 0))));
}

torch::Tensor ClassifierModelImpl::forward(const torch::Tensor& ids, const torch::Tensor& key_valid) {
  return head(encoder(ids, key_valid, /*keep_weights=*/false, /*cls_only=*/true).hidden);
}

MlmModelImpl::MlmModelImpl(Encoder enc, std::shared_ptr<MaskRng> rng) {
  const Architecture& arch = enc->arch();
  encoder = register_module("encoder", enc);
  transform_ = register_module("transform", torch::nn::Linear(arch.hidden, arch.hidden));
  norm_ = register_module("norm", layer_norm(arch));
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
    } else {
      p.zero_();
    }
  }
  for (const auto& m : module.modules(/*include_self=*/false)) {
    const auto* table = m->as<torch::nn::EmbeddingImpl>();
    if (table && table->options.padding_idx()) table->weight[*table->options.padding_idx()].zero_();
  }
}

}  // namespace newscls::bert
