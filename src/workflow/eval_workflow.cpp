#include "newscls/workflow.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>
#include <thread>

#include <spdlog/spdlog.h>

#include "newscls/atomic_file.h"
#include "newscls/config.h"
#include "newscls/error.h"
#include "newscls/interrupt.h"
#include "newscls/progress.h"
#include "newscls/stopwatch.h"
#include "report/svg.h"

namespace newscls {
namespace {

std::string running_accuracy(std::size_t correct, std::size_t done) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "acc %.4f", done == 0 ? 0.0 : double(correct) / double(done));
  return buf;
}

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\t', ' ');
  return s;
}

std::string predictions_tsv(const EvalOutcome& outcome, const Dataset& data, const LabelSet& labels) {
  std::string out = "index\ttrue\tpredicted\tscore\ttitle\n";
  for (std::size_t k = 0; k < outcome.indices.size(); ++k) {
    const Prediction& p = outcome.predictions[k];
    const int truth = data.labels[outcome.indices[k]];
    char score[32];
    std::snprintf(score, sizeof score, "%.6f", p.score);
    out += std::to_string(outcome.indices[k]) + "\t" + labels.names[truth] + "\t" +
           (p.label == kUnknownLabel ? std::string("unknown") : labels.names[p.label]) + "\t" + score + "\t" +
           one_line(data.titles[outcome.indices[k]]) + "\n";
  }
  return out;
}

}  // namespace

int default_thread_count() { return std::max(1u, std::thread::hardware_concurrency()); }

nlohmann::json build_config(const std::string& family, const std::string& config_file,
                            const std::vector<std::string>& overrides) {
  nlohmann::json config = strip_docs(default_config(family));
  if (!config_file.empty()) merge_config_file(config, config_file);
  for (const std::string& assignment : overrides) apply_override(config, assignment);
  return config;
}

std::vector<std::size_t> stratified_sample(const std::vector<int>& labels, std::size_t n, std::uint64_t seed) {
  std::vector<std::size_t> all(labels.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  if (n == 0 || n >= labels.size()) return all;
  const int classes = labels.empty() ? 0 : *std::max_element(labels.begin(), labels.end()) + 1;
  std::vector<std::vector<std::size_t>> by_class(classes);
  for (std::size_t i : all) by_class[labels[i]].push_back(i);
  std::mt19937_64 rng(seed);
  for (auto& members : by_class) std::shuffle(members.begin(), members.end(), rng);
  std::vector<std::size_t> chosen;
  for (std::size_t round = 0; chosen.size() < n; ++round) {  // round-robin keeps classes balanced
    for (const auto& members : by_class) {
      if (round < members.size() && chosen.size() < n) chosen.push_back(members[round]);
    }
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

EvalOutcome evaluate_model(Classifier& model, const Dataset& data, const LabelSet& labels,
                           const EvalOptions& options) {
  EvalOutcome outcome;
  outcome.indices = stratified_sample(data.labels, options.limit, options.seed);
  const std::size_t batch = std::max<std::size_t>(1, model.preferred_batch_size());
  Progress progress(options.progress_label, outcome.indices.size());
  std::size_t correct = 0;
  std::vector<std::string> titles;
  const Stopwatch watch;
  for (std::size_t begin = 0; begin < outcome.indices.size(); begin += batch) {
    check_interrupted();
    const std::size_t end = std::min(outcome.indices.size(), begin + batch);
    titles.clear();
    for (std::size_t k = begin; k < end; ++k) titles.push_back(data.titles[outcome.indices[k]]);
    std::vector<Prediction> predicted = model.predict_batch(titles);
    if (predicted.size() != titles.size()) throw Error(ErrorKind::kData, "model returned the wrong number of predictions");
    for (std::size_t k = 0; k < predicted.size(); ++k) {
      if (predicted[k].label == data.labels[outcome.indices[begin + k]]) ++correct;
      outcome.predictions.push_back(std::move(predicted[k]));
    }
    progress.advance(end - begin, running_accuracy(correct, end));
  }
  progress.finish();
  const double wall = watch.seconds();
  std::vector<int> truth, guesses;
  for (std::size_t k = 0; k < outcome.indices.size(); ++k) {
    truth.push_back(data.labels[outcome.indices[k]]);
    guesses.push_back(outcome.predictions[k].label);
  }
  outcome.metrics = compute_metrics(truth, guesses, labels);
  outcome.metrics.wall_seconds = wall;
  outcome.metrics.titles_per_second = wall > 0 ? outcome.indices.size() / wall : 0;
  return outcome;
}

nlohmann::json eval_report_json(const EvalOutcome& outcome, const Classifier& model, const std::string& data_path) {
  nlohmann::json j = to_json(outcome.metrics);
  j["family"] = model.family();
  j["data"] = data_path;
  j["run_stats"] = model.run_stats();
  return j;
}

void write_eval_files(const std::string& metrics_path, const EvalOutcome& outcome, const nlohmann::json& metrics_json,
                      const Dataset& data, const LabelSet& labels, const std::string& title) {
  std::string dir = std::filesystem::path(metrics_path).parent_path().string();
  if (dir.empty()) dir = ".";
  make_directories(dir);
  write_file_atomic(dir + "/predictions.tsv", predictions_tsv(outcome, data, labels));
  write_file_atomic(dir + "/confusion.svg", report::confusion_svg(outcome.metrics, title));
  write_file_atomic(metrics_path, metrics_json.dump(2) + "\n");
}

namespace {

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

void dump_attention_of(Classifier& model, const Dataset& data, const EvalOutcome& outcome, std::size_t n,
                       const std::string& dir) {
  n = std::min(n, outcome.indices.size());
  std::vector<std::string> titles;
  for (std::size_t k = 0; k < n; ++k) titles.push_back(data.titles[outcome.indices[k]]);
  make_directories(dir);
  model.dump_attention(titles, 0, dir);
  spdlog::info("attention of {} titles written to {}", n, dir);
}

}  // namespace

EvalRun run_eval(const EvalRequest& r) {
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
  if (r.dump_attention > 0) dump_attention_of(*model, data, outcome, r.dump_attention, out_dir + "/attention");
  return {model->family(), path, outcome.metrics};
}

}  // namespace newscls
