#include "hf/bert_config.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "hf/json_fields.h"
#include "newscls/core/utf8.h"

namespace newscls::hf {
namespace {

using nlohmann::json;

std::int64_t positive_int(const json& j, const std::string& key, std::int64_t fallback, const std::string& path) {
  const std::int64_t v = get_int(j, key, fallback, path);
  if (v <= 0) refuse_key(path, key, "must be positive, found " + std::to_string(v));
  return v;
}

// Parses "17" as an id; -1 when the text is not a plain non-negative decimal.
std::int64_t parse_id(const std::string& text) {
  if (text.empty() || text.size() > 9) return -1;
  std::int64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

std::vector<std::string> read_id2label(const json& j, const std::string& path) {
  const auto it = j.find("id2label");
  if (it == j.end() || it->is_null()) return {};
  if (!it->is_object()) refuse_key(path, "id2label", "must be an object, found " + describe_json(*it));
  std::vector<std::string> labels(it->size());
  std::vector<bool> seen(it->size(), false);
  for (const auto& [key, value] : it->items()) {
    const std::int64_t id = parse_id(key);
    if (id < 0 || id >= static_cast<std::int64_t>(labels.size()) || seen[static_cast<std::size_t>(id)]) {
      refuse_key(path, "id2label",
                 "must number its labels 0.." + std::to_string(labels.size() - 1) + ", found id '" + key + "'");
    }
    if (!value.is_string())
      refuse_key(path, "id2label", "label " + key + " must be a string, found " + describe_json(value));
    labels[static_cast<std::size_t>(id)] = value.get<std::string>();
    seen[static_cast<std::size_t>(id)] = true;
  }
  // They become the bundle's classes: each named, once, and one TSV field.
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const std::string& name = labels[i];
    const bool printable = is_valid_utf8(name) && !has_invisible_char(name);
    if (name.empty() || !printable || std::find(labels.begin(), labels.begin() + i, name) != labels.begin() + i) {
      refuse_key(path, "id2label", "label " + std::to_string(i) + " is empty, repeated or holds a control character");
    }
  }
  return labels;
}

void check_label2id(const json& j, const std::vector<std::string>& labels, const std::string& path) {
  const auto it = j.find("label2id");
  if (it == j.end() || it->is_null()) return;
  if (!it->is_object()) refuse_key(path, "label2id", "must be an object, found " + describe_json(*it));
  for (const auto& [name, value] : it->items()) {
    if (!value.is_number_integer())
      refuse_key(path, "label2id", "id of '" + name + "' must be an integer, found " + describe_json(value));
    const auto id = value.get<std::int64_t>();
    if (!labels.empty() &&
        (id < 0 || id >= static_cast<std::int64_t>(labels.size()) || labels[static_cast<std::size_t>(id)] != name)) {
      refuse_key(path, "label2id", "maps '" + name + "' to " + std::to_string(id) + ", which id2label disagrees with");
    }
  }
}

// Keys whose null transformers would not take for its default (it would fail on None); keys
// such as pad_token_id or problem_type may be null there and are read as absent.
void refuse_nulls(const json& j, const std::string& path) {
  for (const char* key :
       {"model_type", "vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
        "max_position_embeddings", "type_vocab_size", "layer_norm_eps", "hidden_act", "position_embedding_type"}) {
    if (j.contains(key) && j.at(key).is_null()) refuse_key(path, key, "is null; transformers would not load it either");
  }
}

// What transformers would compute differently from the bidirectional softmax classifier
// imported here: refused rather than imported as something else.
void refuse_other_models(const json& j, const BertConfig& c, const std::string& path) {
  static const std::vector<std::string> kReadable = {"BertForSequenceClassification", "BertModel", "BertForMaskedLM",
                                                     "BertForPreTraining"};
  for (const std::string& a : c.architectures) {
    if (std::find(kReadable.begin(), kReadable.end(), a) == kReadable.end()) {
      refuse_key(path, "architectures",
                 "names " + a +
                     "; a sequence classifier (BertForSequenceClassification) or an "
                     "encoder (BertModel, BertForMaskedLM, BertForPreTraining) can be imported");
    }
  }
  if (get_bool(j, "is_decoder", false, path))
    refuse_key(path, "is_decoder", "is true: causal attention is not supported");
  if (get_bool(j, "add_cross_attention", false, path))
    refuse_key(path, "add_cross_attention", "is true: not supported");
  const std::string problem = get_string(j, "problem_type", "single_label_classification", path);
  if (problem != "single_label_classification") {
    refuse_key(path, "problem_type",
               "is '" + problem + "'; only single_label_classification (softmax scores) is supported");
  }
}

}  // namespace

BertConfig read_bert_config(const std::string& path) {
  const json j = read_json_object(path);
  refuse_nulls(j, path);
  BertConfig c;
  c.model_type = get_string(j, "model_type", c.model_type, path);
  c.vocab_size = positive_int(j, "vocab_size", c.vocab_size, path);
  c.hidden_size = positive_int(j, "hidden_size", c.hidden_size, path);
  c.num_hidden_layers = positive_int(j, "num_hidden_layers", c.num_hidden_layers, path);
  c.num_attention_heads = positive_int(j, "num_attention_heads", c.num_attention_heads, path);
  c.intermediate_size = positive_int(j, "intermediate_size", c.intermediate_size, path);
  c.max_position_embeddings = positive_int(j, "max_position_embeddings", c.max_position_embeddings, path);
  c.type_vocab_size = positive_int(j, "type_vocab_size", c.type_vocab_size, path);
  c.pad_token_id = get_int(j, "pad_token_id", c.pad_token_id, path);
  c.layer_norm_eps = get_number(j, "layer_norm_eps", c.layer_norm_eps, path);
  c.hidden_act = get_string(j, "hidden_act", c.hidden_act, path);
  c.architectures = get_strings(j, "architectures", path);
  refuse_other_models(j, c, path);
  c.labels = read_id2label(j, path);
  check_label2id(j, c.labels, path);
  if (c.hidden_size % c.num_attention_heads != 0) {
    refuse_key(path, "num_attention_heads",
               std::to_string(c.num_attention_heads) + " does not divide hidden_size " + std::to_string(c.hidden_size));
  }
  if (!(c.layer_norm_eps > 0)) refuse_key(path, "layer_norm_eps", "must be positive");
  const std::string position = get_string(j, "position_embedding_type", "absolute", path);
  if (position != "absolute")
    refuse_key(path, "position_embedding_type", "is '" + position + "'; only 'absolute' is supported");
  return c;
}

}  // namespace newscls::hf
