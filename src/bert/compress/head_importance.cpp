// Head masks, Michel et al.'s importance, and the physical removal of heads.
#include <cmath>
#include <map>

#include "bert/compress/prune.h"
#include "bert/model/tensor_io.h"
#include "bert/tokens/batching.h"
#include "newscls/core/error.h"

namespace newscls::bert {

HeadsKept all_heads(const Architecture& arch) {
  HeadsKept kept(static_cast<std::size_t>(arch.layers));
  for (std::int64_t l = 0; l < arch.layers; ++l) {
    for (std::int64_t h = 0; h < layer_heads(arch, l); ++h) kept[l].push_back(h);
  }
  return kept;
}

std::vector<torch::Tensor> head_masks(const Architecture& arch, const HeadsKept& kept) {
  std::vector<torch::Tensor> masks;
  for (std::int64_t l = 0; l < arch.layers; ++l) {
    torch::Tensor m = torch::zeros({layer_heads(arch, l)});
    for (std::int64_t h : kept.at(l)) m[h] = 1.0f;
    masks.push_back(m);
  }
  return masks;
}

namespace {

std::vector<std::vector<std::size_t>> ordered_batches(const ScoredTitles& data) {
  if (data.titles == nullptr || data.labels == nullptr || data.titles->size() != data.labels->size()) {
    throw UsageError("head scoring needs as many labels as titles");
  }
  std::vector<std::size_t> lengths;
  for (const auto& ids : *data.titles) lengths.push_back(ids.size());
  return bucket_batches(lengths, static_cast<std::size_t>(data.batch_size), nullptr);
}

// Divides each layer's scores by their L2 norm (Michel et al.'s per-layer normalisation).
void normalise_layers(HeadScores& scores) {
  for (auto& layer : scores) {
    double norm = 0;
    for (double v : layer) norm += v * v;
    norm = std::sqrt(norm);
    if (norm > 0) {
      for (double& v : layer) v /= norm;
    }
  }
}

}  // namespace

HeadScores gradient_importance(ClassifierModel model, const std::vector<torch::Tensor>& masks,
                               const ScoredTitles& data) {
  model->eval();
  std::vector<torch::Tensor> leaves;
  for (const torch::Tensor& m : masks) leaves.push_back(m.detach().clone().set_requires_grad(true));
  model->encoder->set_head_masks(leaves);
  std::vector<torch::Tensor> total;
  for (const torch::Tensor& m : masks) total.push_back(torch::zeros_like(m));
  for (const auto& rows : ordered_batches(data)) {
    Batch batch = make_batch(*data.titles, rows, data.labels);
    torch::Tensor loss = torch::cross_entropy_loss(model(batch.ids, batch.key_valid), batch.labels);
    // Only the masks' gradients: no weight gradients are formed.
    std::vector<torch::Tensor> grads = torch::autograd::grad({loss}, leaves);
    const auto weight = static_cast<double>(rows.size()) / static_cast<double>(data.titles->size());
    for (std::size_t l = 0; l < grads.size(); ++l) total[l] += grads[l].abs() * weight;
  }
  model->encoder->set_head_masks({});
  HeadScores scores;
  for (const torch::Tensor& t : total) {
    const torch::Tensor c = t.contiguous();
    scores.emplace_back(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  }
  normalise_layers(scores);
  return scores;
}

double masked_accuracy(ClassifierModel model, const std::vector<torch::Tensor>& masks, const ScoredTitles& data) {
  ordered_batches(data);  // checks the sizes
  model->encoder->set_head_masks(masks);
  const torch::Tensor predicted = predict_probs(model, *data.titles, data.batch_size).argmax(1);
  model->encoder->set_head_masks({});
  const torch::Tensor gold = torch::tensor(*data.labels, torch::kInt64);
  return data.titles->empty() ? 0.0 : predicted.eq(gold).to(torch::kFloat64).mean().item<double>();
}

namespace {

// "encoder.layers.<l>.attention.<part>": l and part, or -1 for any other tensor.
std::int64_t attention_layer(const std::string& name, std::string* part) {
  const std::string prefix = "encoder.layers.";
  if (name.rfind(prefix, 0) != 0) return -1;
  const std::size_t dot = name.find('.', prefix.size());
  const std::string rest = name.substr(dot + 1);
  if (rest.rfind("attention.", 0) != 0) return -1;
  *part = rest.substr(10);
  return std::stoll(name.substr(prefix.size(), dot - prefix.size()));
}

// Rows h*d .. h*d+d-1 of every kept head h.
torch::Tensor kept_rows(const std::vector<std::int64_t>& heads, std::int64_t d_head) {
  std::vector<std::int64_t> rows;
  for (std::int64_t h : heads) {
    for (std::int64_t i = 0; i < d_head; ++i) rows.push_back(h * d_head + i);
  }
  return torch::tensor(rows, torch::kInt64);
}

torch::Tensor sliced(const torch::Tensor& old, const std::string& part, const torch::Tensor& rows) {
  if (part == "query.weight" || part == "key.weight" || part == "value.weight" || part == "query.bias" ||
      part == "key.bias" || part == "value.bias") {
    return old.index_select(0, rows);
  }
  if (part == "output.weight") return old.index_select(1, rows);
  return old;
}

}  // namespace

ClassifierModel remove_heads(ClassifierModel model, const Architecture& arch, const HeadsKept& kept,
                             std::int64_t num_classes, std::shared_ptr<MaskRng> rng, Architecture* pruned) {
  if (static_cast<std::int64_t>(kept.size()) != arch.layers) throw UsageError("one kept-head list per layer");
  Architecture a = arch;
  a.heads_per_layer.clear();
  for (std::int64_t l = 0; l < arch.layers; ++l) {
    if (kept[l].empty()) throw UsageError("every layer keeps at least one head");
    a.heads_per_layer.push_back(static_cast<std::int64_t>(kept[l].size()));
  }
  ClassifierModel out(a, num_classes, std::move(rng));
  std::map<std::string, torch::Tensor> old;
  for (auto& [name, t] : named_state(*model)) old[name] = t;
  const std::int64_t d_head = arch.hidden / arch.heads;
  torch::NoGradGuard no_grad;
  for (auto& [name, t] : named_state(*out)) {
    std::string part;
    const std::int64_t layer = attention_layer(name, &part);
    const torch::Tensor& from = old.at(name);
    t.copy_(layer < 0 ? from : sliced(from, part, kept_rows(kept[layer], d_head)));
  }
  out->eval();
  *pruned = a;
  return out;
}

}  // namespace newscls::bert
