// Hugging Face BERT checkpoints in the bert family: the architecture a config.json describes,
// and the checkpoint's float buffers copied into a ClassifierModel. What transformers
// computes and the encoder reproduces: word + position + token-type (type 0) embeddings,
// LayerNorm with layer_norm_eps, post-LN layers, erf GELU, tanh pooler over [CLS].
//
//   hf::BertCheckpoint ck = hf::load_bert_checkpoint(dir);
//   Architecture arch = architecture_of(ck, /*max_len=*/64);
//   ClassifierModel model(arch, ck.weights.classifier ? labels : 0, rng);
//   copy_checkpoint_weights(ck, *model);
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "bert/model/encoder.h"
#include "bert/model/settings.h"
#include "hf/checkpoint.h"

namespace newscls::bert {

// Throws ModelFormatError naming config.json for what the encoder cannot compute
// (hidden_act other than gelu, a model_type other than bert). max_len is capped by the
// checkpoint's position table.
Architecture architecture_of(const hf::BertCheckpoint& checkpoint, std::int64_t max_len);

// Copies every tensor the checkpoint has into model's parameters of the same role. A
// parameter the checkpoint lacks is an error, except the pooler and classifier when
// fresh_head is set (they keep their initialisation: a new head for fine-tuning).
void copy_checkpoint_weights(const hf::BertCheckpoint& checkpoint, ClassifierModelImpl& model, bool fresh_head);

// For `train --init hf:DIR`: the architecture comes from the checkpoint. A config key that
// was given (with --set, or changed from its default) and contradicts the checkpoint is refused by name;
// other keys take the checkpoint's values. Writes the result into config/options.
void adopt_checkpoint_architecture(const hf::BertCheckpoint& checkpoint, const std::vector<std::string>& given_keys,
                                   nlohmann::json& config, Settings& options);

// Throws ConfigError naming key when it was given or changed from defaults, to another value
// than the one --init `origin` fixes.
void refuse_if_set(const nlohmann::json& config, const nlohmann::json& defaults,
                   const std::vector<std::string>& given_keys, const std::string& key, const nlohmann::json& init_value,
                   const std::string& origin);

}  // namespace newscls::bert
