// The train, eval and predict workflows shared by the CLI subcommands and the pipeline.
//
// train_model: read data -> build config (defaults, --config, --set) -> train -> evaluate on
// test -> write the bundle with metrics.json, confusion.svg and test predictions, atomically.
// evaluate_model: predict a labelled set in batches with a progress bar and running
// accuracy, and compute metrics (a seeded class-stratified sample when the model asks).
// run_eval: `newscls eval` (a bundle on a split or file, its files, attention dumps).
// run_predict: `newscls predict` (titles in, one JSONL or TSV line out per title, streamed).
// Calibration: train_model fits a temperature on dev after training (unless the workflow-level
// key `--set calibrate=false`, accepted for every family) and stores it in the manifest's
// training facts; load_classifier applies it, so eval, predict and the pipeline see calibrated
// scores. Abstention: a title whose calibrated top score is below min_score is not answered.
//
//   TrainRequest req; req.family = "tfidf-rf"; req.out_dir = "runs/tfidf-rf";
//   TrainOutcome out = train_model(req);
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "newscls/core/classifier.h"
#include "newscls/core/data.h"
#include "newscls/core/record_reader.h"
#include "newscls/core/metrics.h"
#include "newscls/workflow/predict_output.h"
#include "newscls/workflow/registry.h"

namespace newscls {

// Self-training on a reader's feed (adapt.h): the settings, each chosen on dev and on signals
// that need no label of the feed (docs/BENCHMARKS.md, "Adapting to another outlet").
struct SelfTraining {
  // At most; 0 = the feed's vocabulary and pretraining only; kFamilyRounds = the family's
  // default_self_training_rounds().
  static constexpr int kFamilyRounds = -1;
  int rounds = kFamilyRounds;
  double min_confidence = 0.9;       // mean calibrated probability of the agreed class
  double share_tolerance = 1.5;      // a class keeps at most this times its labelled share
  double stable_change = 0.02;       // stop when fewer than this share of kept labels changed
  int pseudo_copies = 1;             // each kept feed title counts this many times in training
  std::size_t max_feed_titles = 200000;  // a larger feed is sampled as it is streamed
  bool pretrain = true;              // a family that pretrains an encoder pretrains on the feed too
  nlohmann::json to_json() const;
  void check() const;                // UsageError naming the option out of range
  // These settings with rounds resolved for the family.
  SelfTraining for_family(const std::string& family) const;
};

struct TrainRequest {
  std::string family;
  std::string data_dir;             // "" = default search (see resolve_data_dir)
  DataFiles files;                  // --train [--dev] [--test] instead of a data folder
  std::string out_dir;              // "" = runs/<family>
  std::string config_file;
  std::vector<std::string> overrides;  // key=value
  // When set, the family's effective config as the caller built it (the pipeline: built and
  // checked before any stage ran, members pointed at the run's folders), used instead of
  // config_file and overrides; the workflow-level overrides (calibrate) still apply.
  nlohmann::json config;
  std::uint64_t seed = 1;
  int threads = 1;                  // resolved (>= 1): the app turns --threads 0 into the core count
  bool skip_bad_lines = false;
  bool resume = false;              // continue from work_dir_for(out_dir) (families that resume)
  // What --resume does with a work folder started with other settings: false refuses (a
  // usage error naming what changed), true trains anew (the pipeline).
  bool restart_changed_work = false;
  std::string init_dir;
  std::string device = "cpu";
  DistributedSettings distributed;  // ranks other than 0 train but write no bundle
  // A reader's feed without labels (adapt.h): "" = none; "-" = stdin.
  std::string unlabeled;
  std::vector<std::string> teacher_dirs;  // bundles voting beside the model in self-training
  SelfTraining self_training;
  // Facts added to the manifest's training facts (adapt: how a cascade's members were adapted).
  nlohmann::json extra_facts;
};

struct TrainOutcome {
  std::string out_dir;
  Metrics test_metrics;
  nlohmann::json metrics_json;
  bool wrote_bundle = true;         // false on a distributed rank other than 0
  std::string test_split = "test";  // "dev" when no test file was given: the figures are dev's
};

// Builds the effective config of a family: defaults, then the file, then the overrides.
// Workflow-level keys (calibrate) are not the family's: they are left out here.
nlohmann::json build_config(const std::string& family, const std::string& config_file,
                            const std::vector<std::string>& overrides);

TrainOutcome train_model(const TrainRequest& request);

// Where training into out_dir keeps what a resumed run continues from (bert's checkpoints):
// "<out_dir>.work".
std::string work_dir_for(const std::string& out_dir);

struct EvalOptions {
  std::uint64_t seed = 1;
  std::size_t limit = 0;            // 0 = every title; else a stratified sample
  std::string progress_label = "eval";
};

struct EvalOutcome {
  Metrics metrics;
  std::vector<std::size_t> indices;  // positions in the dataset that were evaluated
  std::vector<int> truth;            // their true labels
  std::vector<Prediction> predictions;
  std::size_t sampled_from = 0;      // the dataset's size when a limit sampled it; else 0
};

EvalOutcome evaluate_model(Classifier& model, const Dataset& data, const LabelSet& labels,
                           const EvalOptions& options);

// metrics.json content of an evaluation (with ECE/NLL/Brier, the risk-coverage curve and, for a
// cascade, the share each stage answered), and its files next to it: confusion.svg,
// reliability.svg, risk_coverage.svg and predictions.tsv (the title's line in the labelled
// file, true label, predicted label, score, title), all written atomically.
nlohmann::json eval_report_json(const EvalOutcome& outcome, const Classifier& model, const std::string& data_path);
void write_eval_files(const std::string& metrics_path, const EvalOutcome& outcome, const nlohmann::json& metrics_json,
                      const Dataset& data, const LabelSet& labels, const std::string& title);
// The figures' caption, as train and eval write it: "bert (bert-quantize) on test.txt" (the
// bundle's folder name where it says more than the family: a compressed copy's figures are
// not its source's).
std::string figure_caption(const std::string& bundle_dir, const std::string& family, const std::string& data_path);

struct EvalRequest {
  std::string model_dir, data_dir, split = "test", input, out;  // out "" = <model_dir>/metrics.json
  FormatOptions format;             // how input is read (newscls/core/record_reader.h)
  std::uint64_t seed = 1;
  int threads = 1;                  // resolved (>= 1): the app turns --threads 0 into the core count
  bool skip_bad_lines = false;
  std::size_t dump_attention = 0;   // attention dumps of the first N titles, into attention/
  double min_score = -1;            // >= 0: report coverage and accuracy of the titles answered
  bool uncalibrated = false;        // ignore the bundle's calibration (to compare before/after)
  // Fit the calibration on this split (dev only) and store it in the bundle's manifest: for
  // bundles trained before calibration existed.
  bool fit_calibration = false;
};

struct EvalRun {
  std::string family, data_path;
  Metrics metrics;
  nlohmann::json report;            // what metrics.json holds
};

// The model's attention dumps of titles into dir as 0..n-1.{json,npy,html}; the dumps of an
// earlier, longer list there are removed, so the folder holds this list's alone.
void dump_attention_into(Classifier& model, const std::vector<std::string>& titles, const std::string& dir);

// Adds the member names of a cascade's training facts ("stages") to metrics.json's stages.
void name_stages(nlohmann::json& metrics, const nlohmann::json& training);

// The selective-prediction figures of an evaluation at a score threshold.
SelectiveMetrics selective_of(const EvalOutcome& outcome, double min_score);

EvalRun run_eval(const EvalRequest& request);

struct PredictRequest {
  std::string model_dir, input = "-", output = "-";  // "-" = stdin, stdout
  PredictionFormat format = PredictionFormat::kJsonl;
  int top_k = 3;
  int threads = 1;                  // resolved (>= 1): the app turns --threads 0 into the core count
  double min_score = -1;            // >= 0: abstain below this calibrated top score
};

// Returns the number of titles predicted.
std::size_t run_predict(const PredictRequest& request);

// A seeded class-stratified sample of n positions (all when n == 0 or n >= size).
std::vector<std::size_t> stratified_sample(const std::vector<int>& labels, std::size_t n, std::uint64_t seed);


}  // namespace newscls
