#include <cstdio>
#include <filesystem>
#include <memory>

#include <spdlog/spdlog.h>

#include "commands.h"
#include "common_options.h"
#include "newscls/atomic_file.h"
#include "newscls/error.h"
#include "newscls/workflow.h"

namespace newscls::app {
namespace {

struct EvalRequest {
  std::string model_dir, data_dir, split = "test", input, out;
  std::uint64_t seed = 1;
  int threads = 0;
  bool skip_bad_lines = false;
  std::size_t dump_attention = 0;
};

LabelSet labels_for(const Bundle& bundle, const EvalRequest& r) {
  LabelSet labels{bundle.manifest().labels};
  if (!r.input.empty()) return labels;
  const DataLayout layout = resolve_data_dir(r.data_dir);
  const LabelSet data_labels = read_class_file(layout.classes());
  if (data_labels.names != labels.names) {
    throw DataError(layout.classes(), 0, "class list differs from the labels the model was trained on");
  }
  return labels;
}

void run_eval(const EvalRequest& r) {
  const Bundle bundle = Bundle::open(r.model_dir);
  const LabelSet labels = labels_for(bundle, r);
  const std::string path = r.input.empty() ? resolve_data_dir(r.data_dir).split(r.split) : r.input;
  const Dataset data = read_labeled_file(path, labels.size(), ReadOptions{r.skip_bad_lines});
  auto model = load_classifier(bundle);
  model->set_threads(r.threads > 0 ? r.threads : default_thread_count());

  EvalOptions options;
  options.seed = r.seed;
  options.limit = model->eval_limit();
  const EvalOutcome outcome = evaluate_model(*model, data, labels, options);

  const std::string out = r.out.empty() ? r.model_dir + "/metrics.json" : r.out;
  std::string out_dir = std::filesystem::path(out).parent_path().string();
  if (out_dir.empty()) out_dir = ".";
  nlohmann::json metrics = eval_report_json(outcome, *model, path);
  metrics["split"] = r.input.empty() ? r.split : "input";
  metrics["skipped_lines"] = data.skipped_lines;
  metrics["training"] = bundle.manifest().training;
  write_eval_files(out, outcome, metrics, data, labels,
                   model->family() + " on " + std::filesystem::path(path).filename().string());
  if (r.dump_attention > 0) {
    const std::size_t n = std::min(r.dump_attention, outcome.indices.size());
    std::vector<std::string> titles;
    for (std::size_t k = 0; k < n; ++k) titles.push_back(data.titles[outcome.indices[k]]);
    const std::string dir = out_dir + "/attention";
    make_directories(dir);
    model->dump_attention(titles, 0, dir);
    spdlog::info("attention of {} titles written to {}", n, dir);
  }
  std::printf("%s on %s\n%s", model->family().c_str(), path.c_str(), format_metrics_table(outcome.metrics).c_str());
}

}  // namespace

void setup_eval(CLI::App& app) {
  auto r = std::make_shared<EvalRequest>();
  CLI::App* cmd = app.add_subcommand("eval", "Evaluate a model bundle on a labelled split or file");
  add_model_dir_option(*cmd, r->model_dir);
  add_data_option(*cmd, r->data_dir);
  cmd->add_option("--split", r->split, "Split of the data directory")
      ->capture_default_str()
      ->check(CLI::IsMember({"test", "dev", "train"}));
  cmd->add_option("--input", r->input, "A labelled file (title<TAB>label_id) instead of a split");
  cmd->add_option("--out", r->out,
                  "metrics.json path (default: <model-dir>/metrics.json); confusion.svg and "
                  "predictions.tsv go next to it");
  add_seed_option(*cmd, r->seed);
  add_threads_option(*cmd, r->threads);
  add_skip_bad_lines_option(*cmd, r->skip_bad_lines);
  cmd->add_option("--dump-attention", r->dump_attention,
                  "Write attention heatmaps of the first N titles into attention/ next to metrics (bert)");
  cmd->callback([r] { run_eval(*r); });
}

}  // namespace newscls::app
