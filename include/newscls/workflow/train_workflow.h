// `newscls train` (and the pipeline's stages, adapt's rounds): read data -> build config
// (defaults, --config, --set) -> train -> evaluate on test -> write the bundle with
// metrics.json, confusion.svg and test predictions, atomically. Calibration: train_model fits a
// temperature on dev after training (unless the workflow-level key `--set calibrate=false`,
// accepted for every family) and stores it in the manifest's training facts; load_classifier
// applies it, so eval, predict and the pipeline see calibrated scores.
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
#include "newscls/core/metrics.h"
#include "newscls/core/record_reader.h"

namespace newscls {

// Self-training on a reader's feed (adapt_workflow.h): the settings, each chosen on dev and on signals
// that need no label of the feed (docs/BENCHMARKS.md, "Adapting to another outlet").
struct SelfTraining {
  // At most; 0 = the feed's vocabulary and pretraining only; kFamilyRounds = the family's
  // default_self_training_rounds().
  static constexpr int kFamilyRounds = -1;
  int rounds = kFamilyRounds;
  double min_confidence = 0.9;           // mean calibrated probability of the agreed class
  double share_tolerance = 1.5;          // a class keeps at most this times its labelled share
  double stable_change = 0.02;           // stop when fewer than this share of kept labels changed
  int pseudo_copies = 1;                 // each kept feed title counts this many times in training
  std::size_t max_feed_titles = 200000;  // a larger feed is sampled as it is streamed
  bool pretrain = true;                  // a family that pretrains an encoder pretrains on the feed too
  nlohmann::json to_json() const;
  void check() const;  // UsageError naming the option out of range
  // These settings with rounds resolved for the family.
  SelfTraining for_family(const std::string& family) const;
};

struct TrainRequest {
  std::string family;
  std::string data_dir;  // "" = default search (see resolve_data_dir)
  DataFiles files;       // --train [--dev] [--test] instead of a data folder
  std::string out_dir;   // "" = runs/<family>
  std::string config_file;
  std::vector<std::string> overrides;  // key=value
  // When set, the family's effective config as the caller built it (the pipeline: built and
  // checked before any stage ran, members pointed at the run's folders), used instead of
  // config_file and overrides; the workflow-level overrides (calibrate) still apply.
  nlohmann::json config;
  std::uint64_t seed = 1;
  int threads = 1;  // resolved (>= 1): the app turns --threads 0 into the core count
  bool skip_bad_lines = false;
  bool resume = false;  // continue from work_dir_for(out_dir) (families that resume)
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
  // An audit file (`newscls audit`, src/workflow/audit_file.h) whose flagged titles are left
  // out of training (exclude_file) or given the suggested class (relabel_file); "" = none.
  // The manifest's training facts record it as "audit".
  std::string exclude_file, relabel_file;
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

}  // namespace newscls
