#include "bert/model/attention_dump.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include <nlohmann/json.hpp>
#include <spdlog/fmt/fmt.h>
#include <spdlog/fmt/ranges.h>

#include "newscls/core/atomic_file.h"
#include "report/svg.h"

namespace newscls::bert {
namespace {

// White (0) to dark blue (1), readable for any weight in [0, 1].
std::string cell_colour(float w) {
  const float v = std::min(1.0f, std::max(0.0f, w));
  const int r = static_cast<int>(255 - 247 * v), g = static_cast<int>(255 - 207 * v),
            b = static_cast<int>(255 - 148 * v);
  return fmt::format("rgb({},{},{})", r, g, b);
}

std::string heatmap(const std::vector<std::string>& tokens, const float* w, std::int64_t t) {
  std::string s = "<table class=\"hm\"><tr><th></th>";
  for (const auto& tok : tokens) s += "<th class=\"k\">" + report::xml_escape(tok) + "</th>";
  s += "</tr>";
  for (std::int64_t i = 0; i < t; ++i) {
    s += "<tr><th>" + report::xml_escape(tokens[i]) + "</th>";
    for (std::int64_t j = 0; j < t; ++j) {
      const float v = w[i * t + j];
      s += fmt::format("<td style=\"background:{}\" title=\"{} &rarr; {}: {:.4f}\"></td>", cell_colour(v),
                       report::xml_escape(tokens[i]), report::xml_escape(tokens[j]), v);
    }
    s += "</tr>";
  }
  return s + "</table>";
}

// Real heads of layer l (a pruned layer's weights are zero-padded to `heads`).
std::int64_t real_heads(const AttentionDump& d, std::int64_t l, std::int64_t heads) {
  return d.heads_per_layer.empty() ? heads : d.heads_per_layer.at(static_cast<std::size_t>(l));
}

std::string cls_summary(const AttentionDump& d) {
  const std::vector<std::string>& tokens = d.tokens;
  // weights (L, H, T, T): the [CLS] query row, averaged over the real heads, one line per layer
  // (a pruned layer's padding heads are zeros: summing them adds nothing).
  const std::int64_t layers = d.shape.at(0), heads = d.shape.at(1), t = d.shape.at(3);
  std::vector<float> cls(static_cast<std::size_t>(layers * t), 0.0f);  // (L, T)
  for (std::int64_t l = 0; l < layers; ++l) {
    const float count = static_cast<float>(real_heads(d, l, heads));
    for (std::int64_t j = 0; j < t; ++j) {
      float sum = 0.0f;
      for (std::int64_t h = 0; h < heads; ++h)
        sum += d.weights[static_cast<std::size_t>(((l * heads + h) * t) * t + j)];
      cls[static_cast<std::size_t>(l * t + j)] = sum / count;
    }
  }
  const float* p = cls.data();
  std::string s = "<table class=\"hm\"><tr><th></th>";
  for (const auto& tok : tokens) s += "<th class=\"k\">" + report::xml_escape(tok) + "</th>";
  s += "</tr>";
  for (std::int64_t l = 0; l < layers; ++l) {
    s += fmt::format("<tr><th>layer {}</th>", l + 1);
    for (std::int64_t j = 0; j < t; ++j) {
      const float v = p[l * t + j];
      s += fmt::format("<td style=\"background:{}\" title=\"{:.4f}\">{:.2f}</td>", cell_colour(v), v, v);
    }
    s += "</tr>";
  }
  return s + "</table>";
}

}  // namespace

std::string npy_bytes(const std::vector<float>& values, const std::vector<std::int64_t>& dims) {
  std::string shape;
  for (std::int64_t d : dims) shape += std::to_string(d) + ", ";
  std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (" + shape.substr(0, shape.size() - 2) + "), }";
  // Magic (6) + version (2) + header length (2) + header, padded with spaces and a newline
  // to a multiple of 64 bytes, as NPY v1.0 asks.
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string out = std::string("\x93NUMPY", 6) + '\x01' + '\x00';
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>((header.size() >> 8) & 0xFF);
  out += header;
  const float* data = values.data();
  out.reserve(out.size() + 4 * values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, &data[i], 4);
    for (int b = 0; b < 4; ++b) out += static_cast<char>((bits >> (8 * b)) & 0xFF);
  }
  return out;
}

std::string attention_json(const AttentionDump& d) {
  const std::int64_t layers = d.shape.at(0), heads = d.shape.at(1), t = d.shape.at(2);
  const float* p = d.weights.data();
  nlohmann::json weights = nlohmann::json::array();
  for (std::int64_t l = 0; l < layers; ++l) {
    nlohmann::json layer = nlohmann::json::array();
    for (std::int64_t h = 0; h < real_heads(d, l, heads); ++h) {
      nlohmann::json rows = nlohmann::json::array();
      for (std::int64_t i = 0; i < t; ++i) {
        const float* row = p + ((l * heads + h) * t + i) * t;
        rows.push_back(std::vector<float>(row, row + t));
      }
      layer.push_back(std::move(rows));
    }
    weights.push_back(std::move(layer));
  }
  const bool classed = d.label_id >= 0;
  nlohmann::json j = {{"title", d.title},
                      {"tokens", d.tokens},
                      {"label", classed ? nlohmann::json(d.label) : nlohmann::json()},
                      {"label_id", classed ? d.label_id : -1},  // as predict writes an abstained title
                      {"score", classed ? nlohmann::json(d.score) : nlohmann::json()},
                      {"layers", layers},
                      {"heads", heads},
                      {"weights", std::move(weights)}};
  if (!d.heads_per_layer.empty()) j["heads_per_layer"] = d.heads_per_layer;
  return j.dump() + "\n";
}

// "4 heads each", or a pruned model's own count per layer ("heads 2, 1").
std::string heads_text(const AttentionDump& d, std::int64_t layers, std::int64_t heads) {
  std::vector<std::int64_t> counts;
  for (std::int64_t l = 0; l < layers; ++l) counts.push_back(real_heads(d, l, heads));
  if (std::all_of(counts.begin(), counts.end(), [&](std::int64_t c) { return c == counts.front(); })) {
    return fmt::format("{} heads each", counts.empty() ? heads : counts.front());
  }
  return fmt::format("heads {}", fmt::join(counts, ", "));
}

std::string attention_html(const AttentionDump& d) {
  const std::int64_t layers = d.shape.at(0), heads = d.shape.at(1), t = d.shape.at(2);
  std::string s =
      "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>attention</title><style>"
      "body{font-family:sans-serif;margin:1em}table.hm{border-collapse:collapse;margin:4px}"
      "table.hm td{width:18px;height:18px;border:1px solid #eee;font-size:9px;text-align:center}"
      "table.hm th{font-weight:normal;font-size:12px;padding:0 3px}"
      "th.k{writing-mode:vertical-rl;vertical-align:bottom}"
      ".grid{display:flex;flex-wrap:wrap;gap:12px}h3{margin:.3em 0}</style></head><body>";
  s += "<h1>" + report::xml_escape(d.title) + "</h1>";
  const std::string verdict =
      d.label_id >= 0 ? fmt::format("predicted <b>{}</b> (score {:.4f})", report::xml_escape(d.label), d.score)
                      : std::string("no class (a blank title, or an encoder without a classifier head)");
  s += fmt::format(
      "<p>{}; {} layers, {}, {} tokens. "
      "Rows are queries, columns are keys; darker means more weight.</p>",
      verdict, layers, heads_text(d, layers, heads), t);
  s += "<h2>[CLS] row, mean over heads</h2>" + cls_summary(d);
  const float* p = d.weights.data();
  for (std::int64_t l = 0; l < layers; ++l) {
    s += fmt::format("<h2>layer {}</h2><div class=\"grid\">", l + 1);
    for (std::int64_t h = 0; h < real_heads(d, l, heads); ++h) {
      s += fmt::format("<div><h3>head {}</h3>", h + 1);
      s += heatmap(d.tokens, p + (l * heads + h) * t * t, t) + "</div>";
    }
    s += "</div>";
  }
  return s + "</body></html>\n";
}

void write_attention_dump(const AttentionDump& dump, const std::string& dir, std::size_t index) {
  make_directories(dir);
  const std::string base = dir + "/" + std::to_string(index);
  write_file_atomic(base + ".json", attention_json(dump));
  write_file_atomic(base + ".npy", npy_bytes(dump.weights, dump.shape));
  write_file_atomic(base + ".html", attention_html(dump));
}

}  // namespace newscls::bert
