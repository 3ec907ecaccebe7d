#include "hf/bert_weights.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "newscls/core/error.h"

namespace newscls::hf {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::vector<std::string> candidate_names(const std::string& logical) {
  std::vector<std::string> forms = {logical};
  for (const auto& [modern, old] : {std::pair<std::string, std::string>{"LayerNorm.weight", "LayerNorm.gamma"},
                                    std::pair<std::string, std::string>{"LayerNorm.bias", "LayerNorm.beta"}}) {
    if (ends_with(logical, modern)) forms.push_back(logical.substr(0, logical.size() - modern.size()) + old);
  }
  std::vector<std::string> names;
  for (const std::string& form : forms) {
    names.push_back(form);
    names.push_back("bert." + form);
  }
  return names;
}

// Reads tensors by logical name, checking shapes and recording which stored names were used.
class WeightReader {
 public:
  explicit WeightReader(const SafetensorsFile& file) : file_(file) {}

  bool has(const std::string& logical) const { return !find_bert_tensor(file_, logical).empty(); }

  Tensor read(const std::string& logical, const std::vector<std::int64_t>& expected, const std::string& why) {
    const std::string name = find_bert_tensor(file_, logical);
    if (name.empty())
      throw ModelFormatError(file_.path(), "missing tensor '" + logical + "' (nor with a 'bert.' prefix)");
    const TensorInfo& info = *file_.find(name);
    if (info.shape != expected) {
      throw ModelFormatError(file_.path(), "tensor '" + name + "' has shape " + shape_string(info.shape) +
                                               ", expected " + shape_string(expected) + " (" + why + ")");
    }
    used_.insert(name);
    Tensor t{name, info.shape, file_.read_floats(info)};
    // One NaN or infinity in a weight makes every prediction NaN: a damaged checkpoint, said here.
    const auto bad = std::find_if(t.values.begin(), t.values.end(), [](float v) { return !std::isfinite(v); });
    if (bad != t.values.end()) {
      throw ModelFormatError(file_.path(), "tensor '" + name + "' holds a NaN or infinite value (element " +
                                               std::to_string(bad - t.values.begin()) + "); the checkpoint is damaged");
    }
    return t;
  }

  Linear linear(const std::string& prefix, std::int64_t out, std::int64_t in, const std::string& why) {
    return Linear{read(prefix + ".weight", {out, in}, why), read(prefix + ".bias", {out}, why)};
  }

  LayerNorm norm(const std::string& prefix, std::int64_t hidden) {
    const std::string why = "hidden_size " + std::to_string(hidden);
    return LayerNorm{read(prefix + ".weight", {hidden}, why), read(prefix + ".bias", {hidden}, why)};
  }

  // A head that is either wholly present or wholly absent.
  bool has_head(const std::string& prefix) const {
    const bool weight = has(prefix + ".weight"), bias = has(prefix + ".bias");
    if (weight != bias) {
      throw ModelFormatError(file_.path(), "has '" + prefix + (weight ? ".weight" : ".bias") + "' without '" + prefix +
                                               (weight ? ".bias" : ".weight") + "'");
    }
    return weight;
  }

  std::vector<std::string> unused() const {
    std::vector<std::string> out;
    for (const auto& [name, info] : file_.tensors()) {
      if (used_.count(name) == 0) out.push_back(name);
    }
    return out;
  }

 private:
  const SafetensorsFile& file_;
  std::set<std::string> used_;
};

BertLayerWeights read_layer(WeightReader& r, const BertConfig& c, std::int64_t index) {
  const std::string p = "encoder.layer." + std::to_string(index) + ".";
  const std::int64_t h = c.hidden_size, ff = c.intermediate_size;
  const std::string hh = "hidden_size " + std::to_string(h);
  const std::string hf = hh + ", intermediate_size " + std::to_string(ff);
  BertLayerWeights l;
  l.query = r.linear(p + "attention.self.query", h, h, hh);
  l.key = r.linear(p + "attention.self.key", h, h, hh);
  l.value = r.linear(p + "attention.self.value", h, h, hh);
  l.attention_output = r.linear(p + "attention.output.dense", h, h, hh);
  l.attention_norm = r.norm(p + "attention.output.LayerNorm", h);
  l.intermediate = r.linear(p + "intermediate.dense", ff, h, hf);
  l.output = r.linear(p + "output.dense", h, ff, hf);
  l.output_norm = r.norm(p + "output.LayerNorm", h);
  return l;
}

std::optional<Linear> read_classifier(WeightReader& r, const SafetensorsFile& file, const BertConfig& c) {
  if (!r.has_head("classifier")) return std::nullopt;
  const TensorInfo& bias = *file.find(find_bert_tensor(file, "classifier.bias"));
  std::int64_t labels = static_cast<std::int64_t>(c.labels.size());
  std::string why = std::to_string(labels) + " labels in id2label";
  if (labels == 0) {  // no id2label: the head decides, but it must be a vector
    labels = bias.shape.size() == 1 ? bias.shape[0] : -1;
    why = "a classifier over hidden_size " + std::to_string(c.hidden_size);
  }
  return r.linear("classifier", labels, c.hidden_size, why);
}

}  // namespace

std::string find_bert_tensor(const SafetensorsFile& file, const std::string& logical) {
  std::string found;
  for (const std::string& name : candidate_names(logical)) {
    if (file.find(name) == nullptr) continue;
    if (!found.empty()) {
      throw ModelFormatError(file.path(),
                             "holds both '" + found + "' and '" + name + "'; cannot tell which is " + logical);
    }
    found = name;
  }
  return found;
}

BertWeights load_bert_weights(const SafetensorsFile& file, const BertConfig& c) {
  WeightReader r(file);
  BertWeights w;
  const std::int64_t h = c.hidden_size;
  w.word_embeddings = r.read("embeddings.word_embeddings.weight", {c.vocab_size, h}, "vocab_size and hidden_size");
  w.position_embeddings = r.read("embeddings.position_embeddings.weight", {c.max_position_embeddings, h},
                                 "max_position_embeddings and hidden_size");
  w.token_type_embeddings =
      r.read("embeddings.token_type_embeddings.weight", {c.type_vocab_size, h}, "type_vocab_size and hidden_size");
  w.embedding_norm = r.norm("embeddings.LayerNorm", h);
  for (std::int64_t i = 0; i < c.num_hidden_layers; ++i) w.layers.push_back(read_layer(r, c, i));
  if (r.has_head("pooler.dense")) w.pooler = r.linear("pooler.dense", h, h, "hidden_size " + std::to_string(h));
  w.classifier = read_classifier(r, file, c);
  w.unused = r.unused();
  return w;
}

}  // namespace newscls::hf
