// Writing one title's attention weights as i.json, i.npy and i.html.
//
// i.json: {"title", "tokens" (with [CLS]/[SEP], no padding), "label", "label_id", "score",
// "weights": [layer][head][T][T]}. i.npy: NPY v1.0, '<f4', C order, shape
// (layers, heads, T, T), zero-padded heads for a pruned bundle ("heads_per_layer" in i.json). i.html: one self-contained page with a heatmap per layer and head
// (query tokens down, key tokens across) and the [CLS] row averaged over heads per layer.
#pragma once

#include <string>
#include <vector>

#include <torch/torch.h>

namespace newscls::bert {

struct AttentionDump {
  std::string title;
  std::vector<std::string> tokens;
  std::string label;
  int label_id = -1;
  float score = 0;
  torch::Tensor weights;  // float (layers, heads, T, T)
  // A pruned bundle's heads per layer: layer l's heads past heads_per_layer[l] are zero
  // padding in weights (and i.npy); i.json lists only the real ones. Empty: all are real.
  std::vector<std::int64_t> heads_per_layer;
};

std::string npy_bytes(const torch::Tensor& weights);
std::string attention_json(const AttentionDump& dump);
std::string attention_html(const AttentionDump& dump);
// Writes <dir>/<index>.json, .npy and .html atomically.
void write_attention_dump(const AttentionDump& dump, const std::string& dir, std::size_t index);

}  // namespace newscls::bert
