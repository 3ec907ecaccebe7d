// The bert family's config: defaults (mirrored in configs/bert.json) and validation.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "bert/encoder.h"

namespace newscls::bert {

struct Options {
  Architecture arch;          // vocab_size filled in once the vocabulary exists
  int vocab_min_count = 2;
  int vocab_max_size = 8000;
  int batch_size = 64;
  int predict_batch_size = 256;
  int epochs = 5;
  int pretrain_epochs = 3;
  double lr = 2e-4;
  double pretrain_lr = 5e-4;
  double warmup = 0.06;       // fraction of the optimiser steps spent warming up
  double weight_decay = 0.01;
  double clip_norm = 1.0;
  double mask_prob = 0.15;
  std::int64_t max_steps = 0;           // 0 = no cap
  std::int64_t pretrain_max_steps = 0;  // 0 = no cap
  int patience = 2;
  int max_threads = 1;
};

nlohmann::json default_options_json();
// Throws ConfigError naming the key.
Options parse_options(const nlohmann::json& config);
// Writes the architecture keys (layers, hidden, heads, ff, max_len) into a config.
void set_architecture(nlohmann::json& config, const Architecture& arch);

}  // namespace newscls::bert
