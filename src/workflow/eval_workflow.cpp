#include "newscls/workflow/eval_workflow.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <random>

#include <spdlog/spdlog.h>

#include "newscls/core/atomic_file.h"
#include "newscls/core/bundle.h"
#include "newscls/core/bundle_files.h"
#include "newscls/core/config.h"
#include "newscls/core/error.h"
#include "newscls/core/interrupt.h"
#include "newscls/core/parallel.h"
#include "newscls/core/progress.h"
#include "newscls/core/request_stats.h"
#include "newscls/core/stopwatch.h"
#include "newscls/workflow/attention_workflow.h"
#include "newscls/workflow/predict_output.h"
#include "newscls/workflow/registry.h"
#include "report/svg.h"
#include "workflow/calibration.h"
#include "workflow/score_tally.h"

namespace fs = std::filesystem;

namespace newscls {
namespace {

std::string running_accuracy(std::size_t correct, std::size_t done) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "acc %.4f", done == 0 ? 0.0 : double(correct) / double(done));
  return buf;
}

std::string predictions_tsv(const EvalOutcome& outcome, const Dataset& data, const LabelSet& labels) {
  std::string out = "line\ttrue\tpredicted\tscore\ttitle\n";  // the title's line in the labelled file
  for (std::size_t k = 0; k < outcome.indices.size(); ++k) {
    const Prediction& p = outcome.predictions[k];
    const std::size_t index = outcome.indices[k];
    const int truth = data.labels[index];
    char score[32];
    std::snprintf(score, sizeof score, "%.6f", p.score);
    const bool has_lines = data.line_numbers.size() == data.titles.size();
    out += std::to_string(has_lines ? data.line_numbers[index] : index + 1) + "\t" + labels.names[truth] + "\t" +
           (p.label == kUnknownLabel ? std::string("unknown") : labels.names[p.label]) + "\t" + score + "\t" +
           tsv_field(data.titles[index]) + "\n";
  }
  return out;
}

}  // namespace

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

EvalOutcome evaluate_model(Classifier& model, const Dataset& data, const LabelSet& labels, const EvalOptions& options) {
  EvalOutcome outcome;
  outcome.indices = stratified_sample(data.labels, options.limit, options.seed);
  // An LLM bundle's limit: its figures are of a sample, which the log and metrics.json say.
  if (outcome.indices.size() < data.titles.size()) {
    outcome.sampled_from = data.titles.size();
    spdlog::info("{}: evaluating a sample of {} of {} titles (the bundle's limit)", options.progress_label,
                 outcome.indices.size(), data.titles.size());
  }
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
    if (predicted.size() != titles.size())
      throw Error(ErrorKind::kData, "model returned the wrong number of predictions");
    for (std::size_t k = 0; k < predicted.size(); ++k) {
      if (predicted[k].label == data.labels[outcome.indices[begin + k]]) ++correct;
      outcome.predictions.push_back(std::move(predicted[k]));
    }
    progress.advance(end - begin, running_accuracy(correct, end));
  }
  progress.finish();
  const double wall = watch.seconds();
  std::vector<int> guesses;
  std::vector<std::vector<float>> probs;
  bool any_probs = false;
  for (std::size_t k = 0; k < outcome.indices.size(); ++k) {
    outcome.truth.push_back(data.labels[outcome.indices[k]]);
    guesses.push_back(outcome.predictions[k].label);
    probs.push_back(outcome.predictions[k].probs);
    any_probs = any_probs || !probs.back().empty();
  }
  outcome.metrics = compute_metrics(outcome.truth, guesses, labels);
  if (any_probs) outcome.metrics.calibration = compute_calibration(outcome.truth, probs);
  outcome.metrics.wall_seconds = wall;
  outcome.metrics.titles_per_second = wall > 0 ? outcome.indices.size() / wall : 0;
  return outcome;
}

namespace {

std::vector<int> labels_of(const EvalOutcome& outcome, std::vector<float>* scores) {
  std::vector<int> out;
  for (const Prediction& p : outcome.predictions) {
    out.push_back(p.label);
    if (scores != nullptr) scores->push_back(p.score);
  }
  return out;
}

nlohmann::json curve_json(const std::vector<CoveragePoint>& curve) {
  nlohmann::json j = nlohmann::json::array();
  for (const CoveragePoint& p : curve) j.push_back({{"coverage", p.coverage}, {"accuracy", p.accuracy}});
  return j;
}

// Per stage of a cascade (Prediction::stage >= 0): the titles it answered and how well.
nlohmann::json stages_json(const EvalOutcome& outcome) {
  std::vector<std::size_t> answered, correct;
  for (std::size_t k = 0; k < outcome.predictions.size(); ++k) {
    const int stage = outcome.predictions[k].stage;
    if (stage < 0) continue;
    if (answered.size() <= static_cast<std::size_t>(stage)) answered.resize(stage + 1), correct.resize(stage + 1);
    ++answered[stage];
    if (outcome.predictions[k].label == outcome.truth[k]) ++correct[stage];
  }
  nlohmann::json j = nlohmann::json::array();
  const double n = static_cast<double>(std::max<std::size_t>(1, outcome.predictions.size()));
  for (std::size_t s = 0; s < answered.size(); ++s) {
    j.push_back({{"stage", s},
                 {"answered", answered[s]},
                 {"share", answered[s] / n},
                 {"accuracy", answered[s] == 0 ? 0.0 : double(correct[s]) / double(answered[s])}});
  }
  return j;
}

}  // namespace

// A cascade's facts name its members ("stages"); metrics.json shows the names with the shares.
void name_stages(nlohmann::json& metrics, const nlohmann::json& training) {
  if (!metrics.contains("stages") || !training.contains("stages") || !training["stages"].is_array()) return;
  for (auto& s : metrics["stages"]) {
    const std::size_t i = s["stage"].get<std::size_t>();
    if (i < training["stages"].size()) s["name"] = training["stages"][i];
  }
}

SelectiveMetrics selective_of(const EvalOutcome& outcome, double min_score) {
  std::vector<float> scores;
  const std::vector<int> predicted = labels_of(outcome, &scores);
  return compute_selective(outcome.truth, predicted, scores, min_score);
}

nlohmann::json eval_report_json(const EvalOutcome& outcome, const Classifier& model, const std::string& data_path) {
  nlohmann::json j = to_json(outcome.metrics);
  j["family"] = model.family();
  j["data"] = data_path;
  j["run_stats"] = model.run_stats();
  // train's test figures too: an LLM outage during them must not pass for the model's accuracy
  if (const std::string failed = failed_titles_line(j["run_stats"]); !failed.empty()) {
    spdlog::warn("{}, and these figures count them so; evaluate again to ask for them", failed);
  }
  if (outcome.sampled_from > 0) j["sampled_from"] = outcome.sampled_from;
  std::vector<float> scores;
  const std::vector<int> predicted = labels_of(outcome, &scores);
  j["risk_coverage"] = curve_json(risk_coverage(outcome.truth, predicted, scores));
  nlohmann::json stages = stages_json(outcome);
  if (!stages.empty()) j["stages"] = stages;
  return j;
}

namespace {

std::string folder_of(const std::string& metrics_path) {
  const std::string dir = fs::path(metrics_path).parent_path().string();
  return dir.empty() ? "." : dir;
}

}  // namespace

namespace {

// An evaluation's files, written and synced but not yet in place: metrics.json last.
AtomicFileSet eval_files(const std::string& metrics_path, const EvalOutcome& outcome,
                         const nlohmann::json& metrics_json, const Dataset& data, const LabelSet& labels,
                         const std::string& title) {
  AtomicFileSet files;
  if (written_in_place(metrics_path)) {
    spdlog::info("{}: metrics only (predictions.tsv and the figures are written beside a metrics file)", metrics_path);
    files.add(metrics_path, json_file_text(metrics_json));
    return files;
  }
  const std::string dir = folder_of(metrics_path) + "/";
  make_directories(dir);
  files.add(dir + kPredictionsFile, predictions_tsv(outcome, data, labels));
  files.add(dir + kConfusionFile, report::confusion_svg(outcome.metrics, title));
  if (outcome.metrics.calibration.count > 0) {
    files.add(dir + kReliabilityFile, report::reliability_svg(outcome.metrics.calibration, title));
  } else {
    files.drop(dir + kReliabilityFile);
  }
  if (metrics_json.contains("risk_coverage")) {
    std::vector<CoveragePoint> curve;
    for (const auto& p : metrics_json["risk_coverage"]) curve.push_back({p["coverage"], p["accuracy"]});
    files.add(dir + kRiskCoverageFile, report::risk_coverage_svg({{title, curve}}, title));
  } else {
    files.drop(dir + kRiskCoverageFile);
  }
  files.add(metrics_path, json_file_text(metrics_json));
  return files;
}

}  // namespace

void write_eval_files(const std::string& metrics_path, const EvalOutcome& outcome, const nlohmann::json& metrics_json,
                      const Dataset& data, const LabelSet& labels, const std::string& title) {
  eval_files(metrics_path, outcome, metrics_json, data, labels, title).commit();
}

namespace {

// A bundle keeps eval's files at its top and in dev/ (compress's evaluation); in any other
// folder of it they are files it does not know, and retraining it would refuse to replace it.
void refuse_folder_inside_bundle(const std::string& out) {
  const std::string holder = bundle_holding(folder_of(out));
  if (holder.empty()) return;
  std::error_code ec;
  const fs::path folder = fs::weakly_canonical(fs::absolute(folder_of(out), ec), ec);
  if (folder == fs::path(holder) || folder == fs::path(holder) / "dev") return;
  throw UsageError("eval --out " + out + " lies in a subfolder of the model bundle " + holder + ", which train --out " +
                   holder + " would then refuse to replace; name a folder outside it");
}

// Before any work: a file eval would write must not be one it reads (the labelled input, the
// bundle's manifest or a payload) nor a file of the data folder it uses, --out must name a
// file, not a folder, and not one of the files written beside it.
void refuse_outputs_over_inputs(const std::string& out, const std::string& input, const Bundle& bundle,
                                const std::vector<std::string>& data_files) {
  if (std::error_code ec; fs::is_directory(out, ec)) {
    throw UsageError("eval --out " + out + " is a folder: name the metrics.json file to write");
  }
  std::vector<std::string> read{input, manifest_path(bundle.dir())};
  for (const auto& payload : bundle.manifest().payloads) read.push_back(bundle.dir() + "/" + payload.first);
  read.insert(read.end(), data_files.begin(), data_files.end());
  std::vector<std::string> written{out};
  if (!written_in_place(out)) {
    refuse_dotdot_through_missing("eval --out " + out, fs::path(out).parent_path().string());
    refuse_folder_inside_bundle(out);
    for (const char* side : {kPredictionsFile, kConfusionFile, kReliabilityFile, kRiskCoverageFile}) {
      if (fs::path(out).filename() == side) {
        throw UsageError("eval --out " + out + ": eval writes its " + side +
                         " beside metrics.json; name the metrics file otherwise");
      }
      written.push_back(folder_of(out) + "/" + side);
    }
  }
  for (const std::string& w : written) {
    if (is_bundle_file(w))
      throw UsageError("eval --out " + out + ": it would write " + w +
                       ", a file of a model bundle; name another --out");
    for (const std::string& r : read) {
      if (same_file(w, r)) {
        throw UsageError("eval --out " + out + ": it would write " + w + ", which is " + r +
                         " (an input of this evaluation or its data folder); name another --out");
      }
    }
  }
}

// A labelled file's ids are the bundle's labels, unless --data is given with it: then they are
// its class.txt's, which must list the bundle's labels in the bundle's order.
LabelSet labels_for(const Bundle& bundle, const EvalRequest& r) {
  LabelSet labels{bundle.manifest().labels};
  if (!r.input.empty() && r.data_dir.empty()) return labels;
  const DataLayout layout = resolve_data_dir(r.data_dir);
  const LabelSet data_labels = read_class_file(layout.classes());
  if (data_labels.names != labels.names) {
    std::size_t line = 0;  // the first line that differs; one past the shorter list's end
    while (line < data_labels.names.size() && line < labels.names.size() &&
           data_labels.names[line] == labels.names[line])
      ++line;
    const std::string want = line < labels.names.size() ? "'" + labels.names[line] + "'" : "no more classes";
    throw DataError(layout.classes(), line + 1,
                    "class list differs from the labels the model was trained on (" + want + " expected here)");
  }
  return labels;
}

nlohmann::json abstention_json(const SelectiveMetrics& s) {
  // With nothing answered there is no accuracy to report: null, not 0.
  const nlohmann::json accuracy = s.answered > 0 ? nlohmann::json(s.accuracy_answered) : nlohmann::json();
  return {{"min_score", s.min_score},
          {"answered", s.answered},
          {"count", s.count},
          {"coverage", s.coverage},
          {"accuracy_answered", accuracy}};
}

void dump_attention_of(Classifier& model, const Dataset& data, const EvalOutcome& outcome, std::size_t n,
                       const std::string& dir) {
  n = std::min(n, outcome.indices.size());
  std::vector<std::string> titles;
  for (std::size_t k = 0; k < n; ++k) titles.push_back(data.titles[outcome.indices[k]]);
  dump_attention_into(model, titles, dir);
  spdlog::info("attention of {} titles written to {}", n, dir);
}

}  // namespace

std::string figure_caption(const std::string& bundle_dir, const std::string& family, const std::string& data_path) {
  std::string name = fs::path(bundle_dir).filename().string();
  if (name.empty()) name = fs::path(bundle_dir).parent_path().filename().string();  // "dir/"
  const std::string who = name.empty() || name == family || name == "." ? family : family + " (" + name + ")";
  return who + " on " + fs::path(data_path).filename().string();
}

namespace {

// The bundle's manifest with the calibration fitted on this (dev) evaluation, as text.
std::string calibrated_manifest(const Bundle& bundle, const EvalOutcome& dev) {
  Temperature t;
  const nlohmann::json facts = fit_calibration_facts(dev, t);
  if (facts.is_null()) throw UsageError("the model gives no probabilities to calibrate");
  Manifest manifest = bundle.manifest();
  manifest.training[kCalibrationFact] = facts;
  return json_file_text(manifest_to_json(manifest));
}

// --fit-calibration rewrites the manifest: not of a cascade (its members are calibrated, and
// a second temperature would stack on theirs) nor of a member inside one (whose checksums it
// would break, so that the cascade no longer loads).
void refuse_fit_inside(const Bundle& bundle, bool calibrated_inside) {
  if (calibrated_inside) {
    throw UsageError("--fit-calibration: this bundle's calibration is its members' own, fitted when it was trained");
  }
  std::error_code ec;  // "." and "..": the folder above the bundle's real one
  const std::string holder =
      bundle_holding(fs::weakly_canonical(fs::absolute(bundle.dir(), ec), ec).parent_path().string());
  if (!holder.empty()) {
    throw UsageError("--fit-calibration: " + bundle.dir() + " lies inside the bundle " + holder +
                     ", which would then no longer verify; fit a copy of it instead");
  }
}

}  // namespace

EvalRun run_eval(const EvalRequest& r) {
  if (r.fit_calibration && (!r.input.empty() || r.split != "dev")) {
    throw UsageError("--fit-calibration fits on dev only: use --split dev without --input");
  }
  const Bundle bundle = Bundle::open(r.model_dir);
  const Family& family = family_of_bundle(bundle);
  if (r.dump_attention > 0 && !family.has_attention()) {  // refused before any output is written
    throw UsageError("--dump-attention: model family '" + family.name() + "' has no attention weights");
  }
  const nlohmann::json& training = bundle.manifest().training;
  // A bundle calibrated inside (a cascade's members) has no calibration of its own to leave out.
  const bool calibrated_inside = family.calibrated_by_members();
  if (r.uncalibrated && calibrated_inside) {
    throw UsageError(
        "--uncalibrated: this bundle's calibration is its members' own; evaluate a member with it instead");
  }
  if (r.fit_calibration) refuse_fit_inside(bundle, calibrated_inside);
  require_classes(bundle);  // a bundle that cannot classify (an encoder) says why before any data is read
  auto model = r.uncalibrated || r.fit_calibration ? load_uncalibrated_classifier(bundle) : load_classifier(bundle);
  const std::string path = r.input.empty() ? resolve_data_dir(r.data_dir).split(r.split) : r.input;
  if (!r.out.empty()) refuse_folder_spelling("eval --out", r.out);
  // Through a link: the file it names is replaced, and the files beside metrics.json go beside that one.
  const std::string out = r.out.empty() ? r.model_dir + "/" + kMetricsFile : link_target(r.out);
  std::vector<std::string> data_files;
  if (r.input.empty() || !r.data_dir.empty()) {
    const DataLayout layout = resolve_data_dir(r.data_dir);
    data_files = {layout.classes(), layout.train(), layout.dev(), layout.test()};
  }
  refuse_outputs_over_inputs(out, path, bundle, data_files);
  if (r.dump_attention > 0 && written_in_place(out)) {
    throw UsageError("--dump-attention writes beside --out: name a metrics file in a folder, not " + out);
  }
  const LabelSet labels = labels_for(bundle, r);
  // A split of a data folder holds ids; a file of one's own may hold the classes' names too.
  const Dataset data = r.input.empty() ? read_labeled_file(path, labels.size(), ReadOptions{r.skip_bad_lines})
                                       : read_records(path, labels, r.format, ReadOptions{r.skip_bad_lines});
  if (r.dump_attention > 0)
    refuse_dump_over_others(folder_of(out) + "/attention", std::min(r.dump_attention, data.size()));
  model->set_threads(given_thread_count(r.threads));

  EvalOptions options;
  options.seed = r.seed;
  options.limit = model->eval_limit();
  const EvalOutcome outcome = evaluate_model(*model, data, labels, options);
  const std::string fitted_manifest = r.fit_calibration ? calibrated_manifest(bundle, outcome) : "";

  const std::string out_dir = folder_of(out);
  nlohmann::json metrics = eval_report_json(outcome, *model, path);
  metrics["split"] = r.input.empty() ? r.split : "input";
  metrics["skipped_lines"] = data.skipped_lines;
  metrics["training"] = bundle.manifest().training;
  // As this run predicted: --fit-calibration measured the model before the fit it stores.
  metrics["calibrated"] = !r.uncalibrated && !r.fit_calibration && calibrated_by_facts(training);
  if (r.min_score >= 0) {
    metrics["abstention"] = abstention_json(selective_of(outcome, r.min_score));
    ScoreTally tally;
    for (const Prediction& p : outcome.predictions) tally.add(p);
    tally.warn_if_none_reach(r.min_score);
  }
  name_stages(metrics, bundle.manifest().training);
  // All written before any is put in place, the dump too: a failure leaves the earlier set.
  AtomicFileSet files = eval_files(out, outcome, metrics, data, labels,
                                   figure_caption(bundle.dir(), model->family(), path) +
                                       (r.uncalibrated || r.fit_calibration ? " (uncalibrated)" : ""));
  if (r.dump_attention > 0) dump_attention_of(*model, data, outcome, r.dump_attention, out_dir + "/attention");
  // The manifest last: an evaluation that could not be written leaves the bundle as it was.
  if (r.fit_calibration) files.add(manifest_path(bundle.dir()), fitted_manifest);
  files.commit();
  if (r.fit_calibration) spdlog::info("calibration stored in {}", manifest_path(bundle.dir()));
  return {model->family(), path, outcome.metrics, metrics};
}

}  // namespace newscls
