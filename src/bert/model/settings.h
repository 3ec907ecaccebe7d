// The bert family's config: its table of keys (configs/bert.json is generated from it) and
// their validation into Settings.
//
// settings_table() is the single source of the defaults; Settings and Architecture hold no
// defaults of their own (zero until parse_settings fills them from a config).
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "bert/model/architecture.h"
#include "newscls/core/config_table.h"

namespace newscls::bert {

struct Settings {
  Architecture arch;        // vocab_size filled in once the vocabulary exists
  std::string tokenizer;    // "char" (own CharVocab) or "wordpiece" (an imported vocab.txt)
  bool fold_punctuation{};  // char tokenizer: punctuation reads as a space (normalize_title)
  bool classifier{};        // false: an imported encoder without a head (embed/attention only)
  int freeze_layers{};      // fine-tuning leaves the embeddings and this many layers unchanged
  double pretrained_lr{};   // peak fine-tuning rate from a Hugging Face checkpoint (--init hf:)
  int vocab_min_count{};
  int vocab_max_size{};
  int batch_size{};
  int predict_batch_size{};
  int epochs{};
  int pretrain_epochs{};
  int continued_pretrain_epochs{};  // adapt: MLM epochs over the feed when continuing a bundle's encoder
  double lr{};
  double pretrain_lr{};
  double warmup{};  // fraction of the optimiser steps spent warming up
  double weight_decay{};
  double clip_norm{};
  double mask_prob{};
  double join_prob{};                 // fine-tuning: share of titles joined with another of their class
  std::int64_t max_steps{};           // 0 = no cap
  std::int64_t pretrain_max_steps{};  // 0 = no cap
  int patience{};
  int max_threads{};
};

// Each key with its default, range and doc: the one source of all of them.
const ConfigTable<Settings>& settings_table();
// Throws ConfigError naming the key.
Settings parse_settings(const nlohmann::json& config);
// Keys that change how a run goes, not what it computes (threads, prediction batches).
std::vector<std::string> execution_keys();
// Writes the architecture keys (layers, hidden, heads, ff, max_len, tables, eps...) into a config.
void set_architecture(nlohmann::json& config, const Architecture& arch);

// `train --init hf:DIR` starts from a Hugging Face checkpoint; another --init, an encoder bundle.
constexpr const char* kHfInitPrefix = "hf:";

// Throws ConfigError naming a key that is not one of the defaults'.
void check_known_keys(const nlohmann::json& config);
// Keys only import-hf and --init hf: set (tokenizer wordpiece, classifier false): refused when
// training from the titles or pretraining a new encoder.
void refuse_import_keys(const Settings& o);
// What the config's own architecture rules out for a classifier (freeze_layers > layers, no
// pooler); with --init the architecture is the encoder's, checked once it is read.
void refuse_architecture_mistakes(const Settings& o);
// Before training from init_dir ("" none, "hf:DIR", or an encoder bundle): the keys only an
// import sets unless from a checkpoint, the architecture's mistakes when it is the config's.
void check_trainable(const Settings& o, const std::string& init_dir);

}  // namespace newscls::bert
