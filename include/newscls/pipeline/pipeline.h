// The main job: train and evaluate the stages in order of cost into one run folder, then
// write a comparison report (report.md, report.html) there.
//
// The request is checked whole before anything runs (UsageError): each stage's config as its
// family reads it, stages listed once, a stage after the stages it reads, a known compression
// method, an existing config folder. A stage that fails is recorded with its error and the
// next one still runs. A stage whose family says it cannot run here (the LLM stage without an
// API key) is reported as skipped with the family's reason, and so is a stage reading a stage
// that failed or was skipped in this run (a cascade's member). A bundle a stage reads (a
// cascade's member) named by a stage of this run is that stage's folder in the run. With resume,
// stages whose bundle and metrics are complete are not run again; a stage trained again starts
// over (its <stage>.work removed) unless it has no bundle yet, where it continues what an
// interrupted run left. A compression stage follows each stage whose family offers the
// request's compression method; the report's compression table reads its compression.json.
//
//   PipelineRequest req; req.stages = {"tfidf-rf", "fasttext"};
//   req.overrides = {"tfidf-rf.n_trees=10"};
//   PipelineSummary s = run_pipeline(req);   // s.run_dir/report.html
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "newscls/core/record_reader.h"

namespace newscls {

struct PipelineRequest {
  std::string data_dir;
  DataFiles files;                     // --train [--dev] [--test] instead of a data folder
  std::string out_dir;                 // "" = runs/<timestamp>
  std::vector<std::string> stages;     // empty = every family, in order
  std::string config_dir;              // optional: <dir>/<stage>.json per stage
  std::vector<std::string> overrides;  // "<stage>.<key>=value"
  std::uint64_t seed = 1;
  int threads = 1;  // resolved (>= 1): the app turns --threads 0 into the core count
  bool resume = false;
  bool skip_bad_lines = false;
  std::size_t attention_titles = 3;  // BERT attention heatmaps shown in the report
  // After a stage whose family offers this compression method (Family::compress_methods), a
  // stage "<stage>-<method>" compresses its bundle with the method's default settings
  // (newscls compress) into the run folder; "" for none. quantize: chosen on dev
  // (docs/BENCHMARKS.md, "int8 quantisation"), it needs no training.
  std::string compress = "quantize";
  // A reader's feed without labels: after each stage whose family adapts (newscls adapt), a stage
  // "<stage>-adapted" adapts its bundle to the feed, so the report shows both rows; "" for none.
  std::string unlabeled;
};

enum class StageStatus { kDone, kResumed, kSkipped, kFailed };

// "done", "resumed", "skipped", "failed": the words pipeline.json and the report use.
const char* to_string(StageStatus status);

struct StageResult {
  std::string stage;
  StageStatus status = StageStatus::kDone;
  std::string reason;  // why skipped or failed
  double wall_seconds = 0;
};

struct PipelineSummary {
  std::string run_dir;
  std::vector<StageResult> stages;
  std::string data_note;  // on the demo set: which data, and the settings used for its size
  // Whether a stage that ran failed (a skipped stage is no failure).
  bool any_failed() const;
};

// In a data folder: the pipeline's settings for that data, applied before --set's.
inline constexpr const char* kDataSettingsFile = "pipeline_settings.json";

PipelineSummary run_pipeline(const PipelineRequest& request);

// Splits "<stage>.<key>=value" overrides by stage; UsageError for a malformed one or an
// unknown stage.
std::vector<std::string> overrides_for_stage(const std::vector<std::string>& overrides, const std::string& stage);

}  // namespace newscls
