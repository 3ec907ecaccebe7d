#include <algorithm>
#include <charconv>
#include <memory>
#include <numeric>
#include <string_view>

#include <spdlog/spdlog.h>

#include "commands.h"
#include "common_options.h"
#include "newscls/atomic_file.h"
#include "newscls/classifier.h"
#include "newscls/interrupt.h"
#include "newscls/progress.h"
#include "newscls/workflow.h"

namespace newscls::app {
namespace {

struct PredictRequest {
  std::string model_dir, input = "-", output = "-", format = "jsonl";
  int top_k = 3;
  int threads = 0;
};

// Appends s as a JSON string, escaped as nlohmann::json::dump() does (quote, backslash and
// control characters; UTF-8, which TitleReader has checked, kept as is). By hand because
// building a json value per field made formatting cost ~10% of tfidf-rf's predict time.
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

// %.6g, as printf writes it.
void append_score(std::string& out, float v) {
  char buf[32];
  const auto end = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 6).ptr;
  out.append(buf, end);
}

std::string label_name(const std::vector<std::string>& labels, int id) {
  return id == kUnknownLabel ? "unknown" : labels[id];
}

// Labels already written as JSON strings, so each line only copies them.
std::vector<std::string> quoted_labels(const std::vector<std::string>& labels) {
  std::vector<std::string> quoted;
  for (const std::string& label : labels) {
    quoted.emplace_back();
    append_json_string(quoted.back(), label);
  }
  return quoted;
}

void append_jsonl(std::string& line, const std::string& title, const Prediction& p,
                  const std::vector<std::string>& quoted, int top_k, std::vector<int>& order) {
  line += "{\"title\":";
  append_json_string(line, title);
  line += ",\"label\":";
  if (p.label == kUnknownLabel) {
    line += "\"unknown\"";
  } else {
    line += quoted[p.label];
  }
  line += ",\"label_id\":";
  line += std::to_string(p.label);
  line += ",\"score\":";
  append_score(line, p.score);
  line += ",\"top_k\":[";
  order.resize(p.probs.size());
  std::iota(order.begin(), order.end(), 0);
  const std::size_t k = std::min<std::size_t>(top_k, order.size());
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](int a, int b) { return p.probs[a] > p.probs[b]; });
  for (std::size_t i = 0; i < k; ++i) {
    line += i ? ",{\"label\":" : "{\"label\":";
    line += quoted[order[i]];
    line += ",\"score\":";
    append_score(line, p.probs[order[i]]);
    line += '}';
  }
  line += "]}\n";
}

std::string tsv_line(std::string title, const Prediction& p, const std::vector<std::string>& labels) {
  std::replace(title.begin(), title.end(), '\t', ' ');
  std::string line = title + "\t" + label_name(labels, p.label) + "\t";
  append_score(line, p.score);
  return line + "\n";
}

void run_predict(const PredictRequest& r) {
  const Bundle bundle = Bundle::open(r.model_dir);
  auto model = load_classifier(bundle);
  model->set_threads(r.threads > 0 ? r.threads : default_thread_count());
  const std::vector<std::string>& labels = bundle.manifest().labels;
  const std::vector<std::string> quoted = quoted_labels(labels);
  std::vector<int> order;
  TitleReader reader(r.input);
  AtomicOutputFile out(r.output);
  const std::size_t batch_size = std::max<std::size_t>(1, model->preferred_batch_size());
  std::vector<std::string> batch;
  std::string title, text;
  Progress progress("predict", 0);
  for (bool more = true; more;) {
    batch.clear();
    while (batch.size() < batch_size && (more = reader.next(title))) batch.push_back(title);
    if (batch.empty()) break;
    check_interrupted();
    const std::vector<Prediction> predictions = model->predict_batch(batch);
    text.clear();
    for (std::size_t i = 0; i < batch.size(); ++i) {
      if (r.format == "jsonl") {
        append_jsonl(text, batch[i], predictions[i], quoted, r.top_k, order);
      } else {
        text += tsv_line(batch[i], predictions[i], labels);
      }
    }
    out.write(text);
    progress.advance(batch.size());
  }
  progress.finish();
  out.commit();
  spdlog::debug("predicted {} titles from {}", reader.line_number(), reader.path());
}

}  // namespace

void setup_predict(CLI::App& app) {
  auto r = std::make_shared<PredictRequest>();
  CLI::App* cmd = app.add_subcommand("predict", "Classify titles, one per line (title<TAB>label accepted)");
  add_model_dir_option(*cmd, r->model_dir);
  cmd->add_option("--input", r->input, "Titles file, or - for stdin")->capture_default_str();
  cmd->add_option("--output", r->output, "Results file (written atomically), or - for stdout")->capture_default_str();
  cmd->add_option("--format", r->format, "jsonl or tsv")->capture_default_str()->check(CLI::IsMember({"jsonl", "tsv"}));
  cmd->add_option("--top-k", r->top_k, "Labels listed in top_k (jsonl)")->capture_default_str()->check(CLI::Range(1, 1000));
  add_threads_option(*cmd, r->threads);
  cmd->callback([r] { run_predict(*r); });
}

}  // namespace newscls::app
