// The architecture of a Hugging Face BERT checkpoint, read from its config.json.
//
// Keys that are absent (or null) take transformers' BertConfig defaults (bert-base sizes).
// A key of the wrong type or an impossible value is refused with a one-line ModelFormatError
// naming the file and the key. id2label, when present, must number its labels 0..n-1;
// label2id, when present, must agree with it.
//
//   BertConfig c = read_bert_config(dir + "/config.json");
//   c.hidden_size / c.num_attention_heads;  // head width
//   c.labels;                              // ["finance", ...] in id order, empty if none
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace newscls::hf {

struct BertConfig {
  std::int64_t vocab_size = 30522;
  std::int64_t hidden_size = 768;
  std::int64_t num_hidden_layers = 12;
  std::int64_t num_attention_heads = 12;
  std::int64_t intermediate_size = 3072;
  std::int64_t max_position_embeddings = 512;
  std::int64_t type_vocab_size = 2;
  std::int64_t pad_token_id = 0;
  double layer_norm_eps = 1e-12;
  std::string hidden_act = "gelu";         // as written; the encoder decides which it supports
  std::string model_type;                  // as written, "" when absent; the encoder decides which it reads
  std::vector<std::string> architectures;  // e.g. {"BertForSequenceClassification"}
  std::vector<std::string> labels;         // id2label in id order; empty without one
};

BertConfig read_bert_config(const std::string& path);

}  // namespace newscls::hf
