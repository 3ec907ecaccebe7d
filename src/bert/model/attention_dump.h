// Writing one title's attention weights as i.json, i.npy and i.html.
//
// i.json: {"title", "tokens" (with [CLS]/[SEP], no padding), "label", "label_id", "score",
// "weights": [layer][head][T][T]}. i.npy: NPY v1.0, '<f4', C order, shape
// (layers, heads, T, T), zero-padded heads for a pruned bundle ("heads_per_layer" in i.json). i.html: one
// self-contained page with a heatmap per layer and head (query tokens down, key tokens across) and the [CLS] row
// averaged over heads per layer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace newscls::bert {

struct AttentionDump {
  std::string title;
  std::vector<std::string> tokens;
  std::string label;
  int label_id = -1;
  float score = 0;
  std::vector<std::int64_t> shape;  // (layers, heads, T, T)
  std::vector<float> weights;       // row-major, that shape
  // A pruned bundle's heads per layer: layer l's heads past heads_per_layer[l] are zero
  // padding in weights (and i.npy); i.json lists only the real ones. Empty: all are real.
  std::vector<std::int64_t> heads_per_layer;
};

// NPY v1.0 bytes of a row-major f32 array of that shape.
std::string npy_bytes(const std::vector<float>& values, const std::vector<std::int64_t>& shape);
std::string attention_json(const AttentionDump& dump);
std::string attention_html(const AttentionDump& dump);
// Writes <dir>/<index>.json, .npy and .html atomically.
void write_attention_dump(const AttentionDump& dump, const std::string& dir, std::size_t index);

}  // namespace newscls::bert
