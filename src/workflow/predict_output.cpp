#include "newscls/workflow/predict_output.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>

#include "newscls/core/error.h"

namespace newscls {
namespace {

// %.6g, as printf writes it (printed_score reads it back); JSON has no NaN: null.
void append_score(std::string& out, float v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  char buf[32];
  const auto end = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 6).ptr;
  out.append(buf, end);
}

}  // namespace

std::string tsv_field(std::string s) {
  for (char& c : s) {
    if (c == '\t' || c == '\r' || c == '\n') c = ' ';
  }
  return s;
}

void append_json_string(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += ch;
        }
    }
  }
  out += '"';
}

std::vector<std::string> stage_names(const Manifest& manifest) {
  std::vector<std::string> names;
  const nlohmann::json& stages = manifest.training.contains("stages") ? manifest.training["stages"] : nlohmann::json();
  if (!stages.is_array()) return names;
  for (const auto& name : stages) names.push_back(name.is_string() ? name.get<std::string>() : name.dump());
  return names;
}

PredictionFormat parse_prediction_format(const std::string& name) {
  if (name == "jsonl") return PredictionFormat::kJsonl;
  if (name == "tsv") return PredictionFormat::kTsv;
  throw UsageError("unknown output format '" + name + "' (jsonl or tsv)");
}

PredictionFormatter::PredictionFormatter(std::vector<std::string> labels, PredictionFormat format, int top_k)
    : labels_(std::move(labels)), format_(format), top_k_(std::max(top_k, 0)) {
  for (const std::string& label : labels_) {
    quoted_.emplace_back();
    append_json_string(quoted_.back(), label);
  }
}

void PredictionFormatter::append_top_k(std::string& out, const Prediction& p) {
  out += "\"top_k\":[";
  order_.resize(std::min(p.probs.size(), quoted_.size()));
  std::iota(order_.begin(), order_.end(), 0);
  const std::size_t k = std::min<std::size_t>(static_cast<std::size_t>(top_k_), order_.size());
  // Ties by class id, lower first, as prediction_from_probs picks the label: top_k[0] is the label.
  std::partial_sort(order_.begin(), order_.begin() + static_cast<std::ptrdiff_t>(k), order_.end(),
                    [&](int a, int b) { return p.probs[a] > p.probs[b] || (p.probs[a] == p.probs[b] && a < b); });
  for (std::size_t i = 0; i < k; ++i) {
    out += i ? ",{\"label\":" : "{\"label\":";
    out += quoted_[order_[i]];
    out += ",\"score\":";
    append_score(out, p.probs[order_[i]]);
    out += '}';
  }
  out += ']';
}

void PredictionFormatter::append_result_object(std::string& out, const Prediction& p) {
  const bool abstained = abstains(p);
  const bool known = !abstained && p.label >= 0 && static_cast<std::size_t>(p.label) < quoted_.size();
  out += "{\"label\":";
  out += abstained ? std::string("null") : known ? quoted_[p.label] : std::string("\"unknown\"");
  out += ",\"label_id\":";
  out += std::to_string(known ? p.label : kUnknownLabel);
  out += ",\"score\":";
  append_score(out, p.score);
  out += ',';
  if (min_score_ >= 0 || p.abstained) out += abstained ? "\"abstained\":true," : "\"abstained\":false,";
  if (p.failed) out += "\"failed\":true,";
  if (p.stage >= 0) {
    out += "\"stage\":";
    if (static_cast<std::size_t>(p.stage) < stage_names_.size()) {
      append_json_string(out, stage_names_[p.stage]);
    } else {
      out += std::to_string(p.stage);
    }
    out += ',';
  }
  append_top_k(out, p);
  out += '}';
}

void PredictionFormatter::append(std::string& out, const std::string& title, const Prediction& p) {
  if (format_ == PredictionFormat::kTsv) {
    out += tsv_field(title);
    out += '\t';
    const bool known = p.label >= 0 && static_cast<std::size_t>(p.label) < labels_.size();
    if (!abstains(p)) out += known ? labels_[p.label] : std::string("unknown");
    out += '\t';
    append_score(out, p.score);
    out += '\n';
    return;
  }
  out += "{\"title\":";
  append_json_string(out, title);
  out += ',';
  std::size_t mark = out.size();
  append_result_object(out, p);
  out.erase(mark, 1);  // the object's own opening brace: the title opened this one
  out += '\n';
}

}  // namespace newscls
