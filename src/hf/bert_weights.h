// Every weight of a Hugging Face BERT checkpoint as float32 buffers with their shapes, found
// under whichever names the file carries: with or without the "bert." prefix, LayerNorm as
// .weight/.bias or as the older .gamma/.beta, pooler and classifier present or absent. The
// heads of pretraining (cls.*), buffers such as position_ids and layers past the config's
// num_hidden_layers are left out and listed in `unused`. Shapes follow torch.nn.Linear ([out, in]) and are checked
// against the config; a missing or mis-shaped tensor is refused with a ModelFormatError naming the file and tensor.
//
//   SafetensorsFile file = SafetensorsFile::open(dir + "/model.safetensors");
//   BertWeights w = load_bert_weights(file, read_bert_config(dir + "/config.json"));
//   w.layers[0].query.weight.shape;   // {hidden, hidden}
//   if (w.classifier) w.classifier->weight.shape;   // {num_labels, hidden}
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hf/bert_config.h"
#include "hf/safetensors.h"

namespace newscls::hf {

struct Tensor {
  std::string name;  // the name in the file, e.g. "bert.embeddings.LayerNorm.gamma"
  std::vector<std::int64_t> shape;
  std::vector<float> values;  // row-major
};

struct Linear {
  Tensor weight;  // [out, in]
  Tensor bias;    // [out]
};

struct LayerNorm {
  Tensor weight;  // [hidden] (gamma)
  Tensor bias;    // [hidden] (beta)
};

struct BertLayerWeights {
  Linear query, key, value;  // [hidden, hidden]
  Linear attention_output;   // [hidden, hidden]
  LayerNorm attention_norm;
  Linear intermediate;  // [intermediate, hidden]
  Linear output;        // [hidden, intermediate]
  LayerNorm output_norm;
};

struct BertWeights {
  Tensor word_embeddings;        // [vocab_size, hidden]
  Tensor position_embeddings;    // [max_position_embeddings, hidden]
  Tensor token_type_embeddings;  // [type_vocab_size, hidden]
  LayerNorm embedding_norm;
  std::vector<BertLayerWeights> layers;  // num_hidden_layers
  std::optional<Linear> pooler;          // [hidden, hidden]
  std::optional<Linear> classifier;      // [num_labels, hidden]; num_labels = config.labels.size() when set
  std::vector<std::string> unused;       // names in the file that none of the above took
};

// The stored name of a logical tensor such as "encoder.layer.0.attention.output.LayerNorm.weight":
// tried as written, with a "bert." prefix, and with gamma/beta for a LayerNorm's weight/bias.
// Empty when none is present; two present is refused as ambiguous.
std::string find_bert_tensor(const SafetensorsFile& file, const std::string& logical);

BertWeights load_bert_weights(const SafetensorsFile& file, const BertConfig& config);

}  // namespace newscls::hf
