// A whole Hugging Face BERT folder: config.json, vocab.txt (+ tokenizer_config.json when
// present) and model.safetensors, read and checked against each other.
//
//   BertCheckpoint ck = load_bert_checkpoint("models/bert-base-chinese");
//   ck.tokenizer.encode(title, 64);  ck.weights.layers.size();  ck.config.labels;
#pragma once

#include <string>

#include "hf/bert_config.h"
#include "hf/bert_weights.h"
#include "hf/wordpiece.h"

namespace newscls::hf {

struct BertCheckpoint {
  std::string dir;
  BertConfig config;
  BertTokenizer tokenizer;
  BertWeights weights;
};

// Refuses (naming the file) a folder without model.safetensors (pytorch_model.bin and sharded
// checkpoints are not read), and a vocab.txt with more lines than the config's vocab_size.
BertCheckpoint load_bert_checkpoint(const std::string& dir);

}  // namespace newscls::hf
