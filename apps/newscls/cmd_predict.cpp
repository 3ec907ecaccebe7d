#include <algorithm>
#include <cstdio>
#include <memory>
#include <numeric>

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

std::string json_string(const std::string& s) { return nlohmann::json(s).dump(); }

std::string score_text(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string label_name(const std::vector<std::string>& labels, int id) {
  return id == kUnknownLabel ? "unknown" : labels[id];
}

std::string jsonl_line(const std::string& title, const Prediction& p, const std::vector<std::string>& labels,
                       int top_k) {
  std::string line = "{\"title\":" + json_string(title) + ",\"label\":" + json_string(label_name(labels, p.label)) +
                     ",\"label_id\":" + std::to_string(p.label) + ",\"score\":" + score_text(p.score) + ",\"top_k\":[";
  std::vector<int> order(p.probs.size());
  std::iota(order.begin(), order.end(), 0);
  const std::size_t k = std::min<std::size_t>(top_k, order.size());
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](int a, int b) { return p.probs[a] > p.probs[b]; });
  for (std::size_t i = 0; i < k; ++i) {
    line += (i ? ",{\"label\":" : "{\"label\":") + json_string(labels[order[i]]) +
            ",\"score\":" + score_text(p.probs[order[i]]) + "}";
  }
  return line + "]}\n";
}

std::string tsv_line(std::string title, const Prediction& p, const std::vector<std::string>& labels) {
  std::replace(title.begin(), title.end(), '\t', ' ');
  return title + "\t" + label_name(labels, p.label) + "\t" + score_text(p.score) + "\n";
}

void run_predict(const PredictRequest& r) {
  const Bundle bundle = Bundle::open(r.model_dir);
  auto model = load_classifier(bundle);
  model->set_threads(r.threads > 0 ? r.threads : default_thread_count());
  const std::vector<std::string>& labels = bundle.manifest().labels;
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
      text += r.format == "jsonl" ? jsonl_line(batch[i], predictions[i], labels, r.top_k)
                                  : tsv_line(batch[i], predictions[i], labels);
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
