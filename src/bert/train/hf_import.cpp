#include "bert/train/hf_import.h"

#include <algorithm>
#include <map>

#include "bert/model/tensor_io.h"
#include "newscls/core/config.h"
#include "newscls/core/error.h"

namespace newscls::bert {
namespace {

using TensorMap = std::map<std::string, const hf::Tensor*>;

std::string config_path(const hf::BertCheckpoint& ck) { return ck.dir + "/config.json"; }

void add_linear(TensorMap& m, const std::string& own, const hf::Linear& l) {
  m[own + ".weight"] = &l.weight;
  m[own + ".bias"] = &l.bias;
}

void add_norm(TensorMap& m, const std::string& own, const hf::LayerNorm& n) {
  m[own + ".weight"] = &n.weight;
  m[own + ".bias"] = &n.bias;
}

// Our parameter names (encoder.h) for the checkpoint's tensors.
TensorMap own_names(const hf::BertWeights& w) {
  TensorMap m;
  m["encoder.token_embedding.weight"] = &w.word_embeddings;
  m["encoder.position_embedding.weight"] = &w.position_embeddings;
  m["encoder.token_type_embedding.weight"] = &w.token_type_embeddings;
  add_norm(m, "encoder.norm", w.embedding_norm);
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    const hf::BertLayerWeights& l = w.layers[i];
    const std::string p = "encoder.layers." + std::to_string(i) + ".";
    add_linear(m, p + "attention.query", l.query);
    add_linear(m, p + "attention.key", l.key);
    add_linear(m, p + "attention.value", l.value);
    add_linear(m, p + "attention.output", l.attention_output);
    add_norm(m, p + "attention_norm", l.attention_norm);
    add_linear(m, p + "intermediate", l.intermediate);
    add_linear(m, p + "output", l.output);
    add_norm(m, p + "output_norm", l.output_norm);
  }
  if (w.pooler) add_linear(m, "pooler", *w.pooler);
  if (w.classifier) add_linear(m, "classifier", *w.classifier);
  return m;
}

void copy_tensor(const hf::Tensor& from, torch::Tensor& into, const std::string& file) {
  if (std::vector<std::int64_t>(into.sizes().begin(), into.sizes().end()) != from.shape ||
      static_cast<std::int64_t>(from.values.size()) != into.numel()) {
    throw ModelFormatError(file,
                           "tensor '" + from.name + "' does not fit parameter of shape " + c10::str(into.sizes()));
  }
  const torch::Tensor src = torch::from_blob(const_cast<float*>(from.values.data()), into.sizes(), torch::kFloat32);
  into.copy_(src);
}

}  // namespace

bool is_given(const nlohmann::json& config, const nlohmann::json& defaults, const std::vector<std::string>& given_keys,
              const std::string& key) {
  return config.at(key) != defaults.at(key) || std::find(given_keys.begin(), given_keys.end(), key) != given_keys.end();
}

void refuse_if_set(const nlohmann::json& config, const nlohmann::json& defaults,
                   const std::vector<std::string>& given_keys, const std::string& key, const nlohmann::json& init_value,
                   const std::string& origin) {
  if (!is_given(config, defaults, given_keys, key) || config.at(key) == init_value) return;
  throw ConfigError(key, "is " + config.at(key).dump() + " but --init " + origin + " has " + init_value.dump() +
                             "; it fixes it (drop the key)");
}

Architecture architecture_of(const hf::BertCheckpoint& ck, std::int64_t max_len) {
  const hf::BertConfig& c = ck.config;
  if (c.hidden_act != "gelu") {
    throw ModelFormatError(config_path(ck),
                           "hidden_act '" + c.hidden_act + "' is not supported (only gelu, the erf form BERT uses)");
  }
  if (!c.model_type.empty() && c.model_type != "bert") {
    throw ModelFormatError(config_path(ck), "model_type '" + c.model_type + "' is not bert");
  }
  Architecture a;
  a.vocab_size = c.vocab_size;
  a.layers = c.num_hidden_layers;
  a.hidden = c.hidden_size;
  a.heads = c.num_attention_heads;
  a.ff = c.intermediate_size;
  a.positions = c.max_position_embeddings;
  a.max_len = std::min<std::int64_t>(max_len, c.max_position_embeddings);
  a.type_vocab_size = c.type_vocab_size;
  a.layer_norm_eps = c.layer_norm_eps;
  a.pooler = ck.weights.pooler.has_value() || ck.weights.classifier.has_value();
  a.dropout = 0.1;  // transformers' defaults, for fine-tuning
  a.attention_dropout = 0.1;
  return a;
}

void copy_checkpoint_weights(const hf::BertCheckpoint& ck, ClassifierModelImpl& model, bool fresh_head) {
  const std::string file = ck.dir + "/model.safetensors";
  const TensorMap names = own_names(ck.weights);
  torch::NoGradGuard no_grad;
  for (auto& [name, tensor] : named_state(model)) {
    const auto it = names.find(name);
    const bool head = name.rfind("pooler.", 0) == 0 || name.rfind("classifier.", 0) == 0;
    if (it != names.end() && !(fresh_head && name.rfind("classifier.", 0) == 0)) {
      copy_tensor(*it->second, tensor, file);
    } else if (!(fresh_head && head)) {
      throw ModelFormatError(file, "has no tensor for '" + name + "'");
    }
  }
}

void adopt_checkpoint_architecture(const hf::BertCheckpoint& ck, const std::vector<std::string>& given_keys,
                                   nlohmann::json& config, Settings& options) {
  const std::string origin = "hf:" + ck.dir;
  const nlohmann::json defaults = settings_table().defaults();
  const hf::BertConfig& c = ck.config;
  refuse_if_set(config, defaults, given_keys, "layers", c.num_hidden_layers, origin);
  refuse_if_set(config, defaults, given_keys, "hidden", c.hidden_size, origin);
  refuse_if_set(config, defaults, given_keys, "heads", c.num_attention_heads, origin);
  refuse_if_set(config, defaults, given_keys, "ff", c.intermediate_size, origin);
  refuse_if_set(config, defaults, given_keys, "bigram_buckets", 0, origin);
  refuse_if_set(config, defaults, given_keys, "trigram_buckets", 0, origin);
  for (const char* key :
       {"positions", "type_vocab_size", "layer_norm_eps", "pooler", "tokenizer", "classifier", "heads_per_layer"}) {
    if (is_given(config, defaults, given_keys, key)) {
      throw ConfigError(key, std::string("comes from the checkpoint with --init ") + origin + " (drop the key)");
    }
  }
  if (options.arch.max_len > c.max_position_embeddings) {
    throw ConfigError("max_len", "is " + std::to_string(options.arch.max_len) + " but --init " + origin + " has only " +
                                     std::to_string(c.max_position_embeddings) + " positions");
  }
  const int freeze = options.freeze_layers;
  const Architecture arch = architecture_of(ck, options.arch.max_len);
  options.arch = Architecture{arch.vocab_size,
                              arch.layers,
                              arch.hidden,
                              arch.heads,
                              arch.ff,
                              arch.max_len,
                              options.arch.dropout,
                              options.arch.attention_dropout,
                              0,
                              0,
                              arch.positions,
                              arch.type_vocab_size,
                              arch.layer_norm_eps,
                              true,
                              {}};
  if (freeze > arch.layers)
    throw ConfigError("freeze_layers", "exceeds the checkpoint's " + std::to_string(arch.layers) + " layers");
  options.tokenizer = "wordpiece";
  set_architecture(config, options.arch);
  config["tokenizer"] = "wordpiece";
}

}  // namespace newscls::bert
