#include "newscls/pipeline/pipeline.h"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include <spdlog/fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "newscls/core/atomic_file.h"
#include "newscls/core/bundle.h"
#include "newscls/core/bundle_files.h"
#include "newscls/core/config.h"
#include "newscls/core/error.h"
#include "newscls/core/sha256.h"
#include "newscls/core/stopwatch.h"
#include "newscls/workflow/adapt_workflow.h"
#include "newscls/workflow/compress_workflow.h"
#include "newscls/workflow/registry.h"
#include "newscls/workflow/train_workflow.h"
#include "pipeline/report.h"
#include "workflow/calibration.h"
#include "workflow/splits.h"

namespace fs = std::filesystem;

namespace newscls {
namespace {

std::string timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return buf;
}

// A stage as this run will train it, settled before any stage runs.
struct PlannedStage {
  std::string name, dir;
  nlohmann::json config;  // effective; the bundles it reads that are stages of this run point into the run
  CalibrateSetting calibrate = CalibrateSetting::kAuto;  // a workflow-level key, not in config
  std::vector<std::string> inputs;  // the stages of this run whose bundles it reads (a cascade's members)
};

// The data of this run, as --resume compares it.
struct RunData {
  std::string sha256, test_path;
  std::string test_split = "test";  // "dev" for --train without --test
};

// What --resume needs of a finished stage: the settings and data this run would train it with.
struct Expected {
  std::string family;
  nlohmann::json config;
  CalibrateSetting calibrate = CalibrateSetting::kAuto;
  std::uint64_t seed = 1;
  RunData data;
};

bool same_path(const std::string& a, const std::string& b) {
  std::error_code ea, eb;
  const fs::path pa = fs::weakly_canonical(a, ea), pb = fs::weakly_canonical(b, eb);
  return !ea && !eb && pa == pb;
}

// The path metrics.json records is as its run spelt it (relative to its folder, or since
// moved): only a file that is there and holds other titles than this run's test split is
// another evaluation's; the manifest's data hash has already matched this run's data.
bool other_test_file(const std::string& recorded, const std::string& test_path) {
  if (same_path(recorded, test_path)) return false;
  std::error_code ec;
  if (!fs::is_regular_file(recorded, ec)) return false;
  return sha256_file_hex(recorded) != sha256_file_hex(test_path);
}

// The report reads metrics.json as training wrote it; a later `eval` into the bundle (the
// default --out) may have put another split, file or calibration there. Empty when it is training's.
std::string metrics_not_training(const std::string& dir, const Manifest& m, const RunData& data) {
  const nlohmann::json j =
      nlohmann::json::parse(read_file(dir + "/" + kMetricsFile), nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return "its metrics.json is not a JSON object";
  if (j.value("split", nlohmann::json()) != data.test_split || !j.value("data", nlohmann::json()).is_string() ||
      other_test_file(j["data"].get<std::string>(), data.test_path)) {
    return "its metrics.json is not of this run's test split (an eval since training?)";
  }
  if (j.value("calibrated", nlohmann::json()) != calibrated_by_facts(m.training)) {
    return "its metrics.json is not calibrated as its manifest is (an eval since training?)";
  }
  return {};
}

// The config it was asked for (a family may store its own choices), its bundles to read (a
// cascade's members) compared as paths: the run folder named another way is the same run.
bool same_config(const std::string& family_name, const Manifest& m, const nlohmann::json& want) {
  nlohmann::json asked = m.training.contains(kRequestedConfigKey) ? m.training[kRequestedConfigKey] : m.config;
  const Family& family = find_family(family_name);
  const std::vector<std::string> had = family.trains_from(asked), wants = family.trains_from(want);
  if (!had.empty() && had.size() == wants.size() && std::equal(had.begin(), had.end(), wants.begin(), same_path)) {
    asked = family.with_trains_from(asked, wants);
  }
  return asked == want;
}

// Empty when the bundle in dir is complete and was trained as this run asks; else why not.
std::string not_resumable(const std::string& dir, const Expected& want) {
  for (const char* file : {kMetricsFile, kPredictionsFile}) {
    if (!fs::exists(dir + "/" + file)) return std::string("no ") + file + " yet";
  }
  try {
    const Bundle bundle = Bundle::open(dir);
    const Manifest& m = bundle.manifest();
    if (!same_config(want.family, m, want.config)) return "its config differs from this run's";
    // Bundles trained before the setting was recorded are not compared.
    if (m.training.contains(kCalibrateKey) &&
        m.training.value(kCalibrateKey, std::string()) != to_string(want.calibrate)) {
      return std::string("it was trained with calibrate ") + m.training.value(kCalibrateKey, std::string()) +
             ", this run asks for " + to_string(want.calibrate);
    }
    if (!m.training.contains("seed") || m.training["seed"] != want.seed) return "its seed differs from this run's";
    if (m.training.value("data_sha256", std::string()) != want.data.sha256) return "it was trained on other data";
    return metrics_not_training(dir, m, want.data);
  } catch (const Error& e) {
    return std::string("its bundle does not verify: ") + e.what();
  }
}

// An input that failed or was skipped in this run left an older bundle, or none, in its folder:
// a stage built from it would silently read that. Empty when every input is usable.
std::string unusable_input(const std::vector<std::string>& inputs, const std::map<std::string, StageStatus>& earlier) {
  for (const std::string& input : inputs) {
    const StageStatus status = earlier.at(input);
    if (status == StageStatus::kFailed || status == StageStatus::kSkipped) {
      return "it reads " + input + ", which " + (status == StageStatus::kFailed ? "failed" : "was skipped") +
             " in this run";
    }
  }
  return {};
}

// A stage reading a bundle retrained in this run (a cascade's members) is retrained too.
std::string retrained_input(const std::vector<std::string>& inputs, const std::map<std::string, StageStatus>& earlier) {
  for (const std::string& input : inputs) {
    if (earlier.at(input) == StageStatus::kDone) return "it reads " + input + ", trained again in this run";
  }
  return {};
}

void write_status(const std::string& run_dir, const std::vector<StageResult>& results) {
  nlohmann::json stages = nlohmann::json::array();
  for (const StageResult& r : results) {
    stages.push_back(
        {{"stage", r.stage}, {"status", to_string(r.status)}, {"reason", r.reason}, {"wall_seconds", r.wall_seconds}});
  }
  write_json_atomic(run_dir + "/pipeline.json", nlohmann::json{{"stages", stages}});
}

TrainRequest train_request(const PipelineRequest& request, const std::string& stage, const std::string& stage_dir) {
  TrainRequest train;
  train.family = stage;
  train.data_dir = request.data_dir;
  train.files = request.files;
  train.out_dir = stage_dir;
  const std::string config_file = request.config_dir.empty() ? "" : request.config_dir + "/" + stage + ".json";
  if (!config_file.empty() && fs::exists(config_file)) train.config_file = config_file;
  train.overrides = overrides_for_stage(request.overrides, stage);
  train.seed = request.seed;
  train.threads = request.threads;
  train.skip_bad_lines = request.skip_bad_lines;
  return train;
}

StageResult train_stage(const PipelineRequest& request, const PlannedStage& stage, bool continue_work) {
  StageResult result{stage.name, StageStatus::kDone, "", 0};
  TrainRequest train = train_request(request, stage.name, stage.dir);
  train.config = stage.config;
  // Training empties the work folder it does not continue, and starts over where the
  // checkpoints there were made with other settings (an interrupted stage whose config changed).
  train.resume = continue_work && find_family(stage.name).resumes();
  train.restart_changed_work = true;
  const Stopwatch watch;
  try {
    result.reason = find_family(stage.name).unavailable_reason(stage.config);
    if (!result.reason.empty()) {
      result.status = StageStatus::kSkipped;
      return result;
    }
    train_model(train);
  } catch (const InterruptedError&) {
    throw;
  } catch (const UsageError&) {
    throw;  // a mistyped flag is the user's to fix before anything runs
  } catch (const std::exception& e) {
    result.status = StageStatus::kFailed;
    result.reason = e.what();
    spdlog::error("stage {} failed: {}", stage.name, e.what());
  }
  result.wall_seconds = watch.seconds();
  return result;
}

// earlier: the outcome of each stage this run has run so far.
StageResult run_stage(const PipelineRequest& request, const PlannedStage& stage, const RunData& data,
                      const std::map<std::string, StageStatus>& earlier) {
  if (std::string why = unusable_input(stage.inputs, earlier); !why.empty()) {
    return {stage.name, StageStatus::kSkipped, why, 0};
  }
  if (!request.resume) return train_stage(request, stage, false);
  std::string why = retrained_input(stage.inputs, earlier);
  if (why.empty()) why = not_resumable(stage.dir, {stage.name, stage.config, stage.calibrate, request.seed, data});
  if (why.empty()) return {stage.name, StageStatus::kResumed, "bundle and metrics already complete", 0};
  if (fs::exists(stage.dir)) spdlog::info("stage {}: not resumed: {}", stage.name, why);
  // Only an interrupted training (no bundle yet) is continued. A bundle that is there but not
  // resumed was trained with other settings, data or inputs, and so was its work folder.
  return train_stage(request, stage, !fs::exists(stage.dir) && retrained_input(stage.inputs, earlier).empty());
}

// A stage made from another's bundle, run and timed: failed with its error, or done; only an
// interruption stops the run.
StageResult run_timed(const std::string& stage, const std::function<void()>& work) {
  StageResult result{stage, StageStatus::kDone, "", 0};
  const Stopwatch watch;
  try {
    work();
  } catch (const InterruptedError&) {
    throw;
  } catch (const std::exception& e) {
    result.status = StageStatus::kFailed;
    result.reason = e.what();
    spdlog::error("stage {} failed: {}", stage, e.what());
  }
  result.wall_seconds = watch.seconds();
  return result;
}

// Its source stage was resumed too (else the compression is of an older bundle).
bool compression_complete(const std::string& dir, const RunData& data) {
  if (!fs::exists(dir + "/compression.json") || !fs::exists(dir + "/" + kMetricsFile)) return false;
  try {
    const Bundle bundle = Bundle::open(dir);
    const std::string why = metrics_not_training(dir, bundle.manifest(), data);
    if (!why.empty()) spdlog::info("{}: not resumed: {}", dir, why);
    return why.empty();
  } catch (const Error&) {
    return false;
  }
}

// The request's compression of a finished stage's bundle, as a stage of its own named
// "<stage>-<method>"; nullopt when the run asks for none or the family lacks the method.
std::optional<StageResult> run_compression(const PipelineRequest& request, const std::string& stage,
                                           const std::string& run_dir, bool source_resumed, const RunData& data) {
  const std::vector<std::string> methods = find_family(stage).compress_methods();
  if (std::find(methods.begin(), methods.end(), request.compress) == methods.end()) return std::nullopt;
  CompressRequest o;
  o.method = request.compress;
  o.model_dir = run_dir + "/" + stage;
  StageResult result{stage + "-" + o.method, StageStatus::kDone, "", 0};
  o.out_dir = run_dir + "/" + result.stage;
  if (request.resume && source_resumed && compression_complete(o.out_dir, data)) {
    result.status = StageStatus::kResumed;
    result.reason = "bundle and compression.json already complete";
    return result;
  }
  o.data_dir = request.data_dir;
  o.seed = request.seed;
  o.threads = request.threads;
  o.skip_bad_lines = request.skip_bad_lines;
  return run_timed(result.stage, [&] { run_compress(o); });
}

constexpr const char* kAdaptedSuffix = "-adapted";

bool adaptation_complete(const std::string& dir, const RunData& data) {
  if (!fs::exists(dir + "/" + kMetricsFile)) return false;
  try {
    return metrics_not_training(dir, Bundle::open(dir).manifest(), data).empty();
  } catch (const Error&) {
    return false;
  }
}

// A stage made of other stages' bundles (a cascade) is not adapted again: its members' adapted
// rows stand beside theirs.
bool adapts(const PipelineRequest& request, const std::string& family) {
  return !request.unlabeled.empty() && why_not_adaptable(family).empty() &&
         !find_family(family).calibrated_by_members();
}

// The stage's bundle adapted to the request's feed, as a stage of its own "<stage>-adapted";
// nullopt when the run has no feed or the family does not adapt.
std::optional<StageResult> run_adaptation(const PipelineRequest& request, const std::string& stage,
                                          const std::string& run_dir, bool source_resumed, const RunData& data) {
  if (!adapts(request, stage)) return std::nullopt;
  AdaptRequest a;
  a.model_dir = run_dir + "/" + stage;
  StageResult result{stage + kAdaptedSuffix, StageStatus::kDone, "", 0};
  a.out_dir = run_dir + "/" + result.stage;
  if (request.resume && source_resumed && adaptation_complete(a.out_dir, data)) {
    return StageResult{result.stage, StageStatus::kResumed, "bundle and metrics already complete", 0};
  }
  a.unlabeled = request.unlabeled;
  a.data_dir = request.data_dir;
  a.seed = request.seed;
  a.threads = request.threads;
  a.skip_bad_lines = request.skip_bad_lines;
  return run_timed(result.stage, [&] { adapt_model(a); });
}

bool offers(const std::string& family, const std::string& method) {
  const std::vector<std::string> methods = find_family(family).compress_methods();
  return std::find(methods.begin(), methods.end(), method) != methods.end();
}

// The suffixes of the stages a stage's bundle makes: "-<method>" (compression), "-adapted".
std::vector<std::string> derived_stages(const PipelineRequest& request, const std::string& stage) {
  std::vector<std::string> suffixes;
  if (offers(stage, request.compress)) suffixes.push_back("-" + request.compress);
  if (adapts(request, stage)) suffixes.push_back(kAdaptedSuffix);
  return suffixes;
}

// "" and "none" ask for no compression; any other method must be one some family offers, else a
// typo ("quantise") would silently compress nothing. The run's own stages are asked first, so
// that a plain run loads no other family's plugin.
void check_compress_method(const std::string& method, const std::vector<std::string>& stages) {
  if (method.empty() || method == "none") return;
  if (std::any_of(stages.begin(), stages.end(), [&](const std::string& s) { return offers(s, method); })) return;
  std::set<std::string> offered;
  for (const std::string& family : known_families()) {
    if (offers(family, method)) return;
    for (const std::string& m : find_family(family).compress_methods()) offered.insert(m);
  }
  throw UsageError("pipeline --compress " + method + ": no family offers it; expected none or one of " +
                   fmt::format("{}", fmt::join(offered, ", ")));
}

void check_stages_distinct(const std::vector<std::string>& stages) {
  for (std::size_t i = 0; i < stages.size(); ++i) {
    if (std::find(stages.begin(), stages.begin() + i, stages[i]) != stages.begin() + i) {
      throw UsageError("pipeline --stages: stage " + stages[i] + " is listed twice");
    }
  }
}

// The stage's effective config and calibrate setting, read as training will read them: a
// mistyped key or a value out of range is the user's to fix before anything runs, not a stage
// failure later.
void check_settings(const PipelineRequest& request, PlannedStage& stage) {
  const TrainRequest train = train_request(request, stage.name, "");
  try {
    stage.config = build_config(stage.name, train.config_file, train.overrides);
    const std::unique_ptr<Classifier> model = make_classifier(stage.name);
    model->configure(stage.config);
    model->check_trainable("");  // the pipeline starts every stage afresh
    stage.calibrate = calibrate_setting(train.config_file, train.overrides);
    refuse_calibrate_setting(stage.name, stage.calibrate);
  } catch (const ConfigError& e) {
    throw UsageError("stage " + stage.name + ": " + e.what());
  } catch (const IoError& e) {  // the stage's --config-dir file is not valid JSON
    throw UsageError("stage " + stage.name + ": " + e.what());
  }
}

// The stage of this run whose bundle `bundle` names: by its bare name, or by its folder's path.
std::optional<std::size_t> stage_named(const std::string& bundle, const std::vector<std::string>& stages,
                                       const std::string& run_dir) {
  for (std::size_t i = 0; i < stages.size(); ++i) {
    if (bundle == stages[i] || same_path(bundle, run_dir + "/" + stages[i])) return i;
  }
  return std::nullopt;
}

// A bundle the stage reads that is named by a stage of this run is that stage's folder in the
// run, not a folder of that name where the pipeline happens to run; that stage must come first.
PlannedStage plan_stage(const PipelineRequest& request, const std::vector<std::string>& stages, std::size_t index,
                        const std::string& run_dir) {
  PlannedStage stage{stages[index], run_dir + "/" + stages[index], {}, CalibrateSetting::kAuto, {}};
  check_settings(request, stage);
  const Family& family = find_family(stage.name);
  std::vector<std::string> bundles = family.trains_from(stage.config);
  for (std::string& bundle : bundles) {
    const std::optional<std::size_t> at = stage_named(bundle, stages, run_dir);
    if (!at) continue;  // no stage of this run: the family looks for it
    if (*at >= index) {
      throw UsageError("pipeline --stages: stage " + stage.name + " reads " + stages[*at] + ", so " + stages[*at] +
                       " must come before it");
    }
    stage.inputs.push_back(stages[*at]);
    bundle = run_dir + "/" + stages[*at];
  }
  if (!stage.inputs.empty()) stage.config = family.with_trains_from(stage.config, bundles);
  return stage;
}

// A --set for a family this run does not train is checked too: a key that family does not know
// is a typo, wherever it points. A family whose plugin cannot be loaded here cannot say which
// keys it knows.
void check_other_overrides(const PipelineRequest& request, const std::vector<std::string>& stages) {
  for (const std::string& family : known_families()) {
    const std::vector<std::string> mine = overrides_for_stage(request.overrides, family);
    const std::string config_file = train_request(request, family, "").config_file;
    if ((mine.empty() && config_file.empty()) || std::find(stages.begin(), stages.end(), family) != stages.end())
      continue;
    try {
      if (!config_file.empty()) read_config_file(config_file);
    } catch (const IoError& e) {  // not valid JSON
      throw UsageError("stage " + family + " (not in --stages): " + e.what());
    }
    try {
      build_config(family, config_file, mine);
      refuse_calibrate_setting(family, calibrate_setting(config_file, mine));
    } catch (const ConfigError& e) {
      throw UsageError("stage " + family + " (not in --stages): " + e.what());
    } catch (const IoError& e) {
      spdlog::warn("pipeline --set {}.*: not checked, the family cannot be loaded: {}", family, e.what());
    }
  }
}

// A --config-dir file is <stage>.json: another name ("fastext.json") would be ignored.
void check_config_dir(const std::string& config_dir) {
  if (config_dir.empty()) return;
  if (!fs::is_directory(config_dir)) throw UsageError("pipeline --config-dir " + config_dir + ": no such folder");
  const std::vector<std::string> families = known_families();
  for (const fs::directory_entry& e : fs::directory_iterator(config_dir)) {
    if (e.path().extension() != ".json") continue;
    const std::string stem = e.path().stem().string();
    if (std::find(families.begin(), families.end(), stem) == families.end()) {
      throw UsageError("pipeline --config-dir: " + e.path().string() +
                       " names no stage (expected <stage>.json, one of " +
                       fmt::format("{}", fmt::join(families, ", ")) + ")");
    }
  }
}

// Compression reads a --data folder's splits; it has none to read with --train.
void refuse_compress_of_files(const PipelineRequest& request) {
  if (!request.files.given() || request.compress.empty() || request.compress == "none") return;
  throw UsageError("pipeline --compress " + request.compress +
                   " reads a --data folder's splits; with --train, give --compress none");
}

// Everything the request asks is checked here, before the run folder is made or a stage runs;
// data is what --resume compares.
std::vector<PlannedStage> plan_run(const PipelineRequest& request, const std::string& run_dir, RunData& data) {
  const std::vector<std::string> stages = request.stages.empty() ? known_families() : request.stages;
  check_stages_distinct(stages);
  for (const std::string& stage : stages) find_family(stage);  // an unknown or unloadable stage stops here
  check_compress_method(request.compress, stages);
  refuse_compress_of_files(request);
  if (request.unlabeled == "-") {
    throw UsageError("pipeline --unlabeled: a file, not stdin (each adapted stage reads the feed)");
  }
  check_config_dir(request.config_dir);
  check_other_overrides(request, stages);
  if (fs::exists(manifest_path(run_dir))) {
    throw UsageError("pipeline --out " + run_dir + " is a model bundle (it holds manifest.json); a run folder " +
                     "holds a bundle per stage: name another folder");
  }
  // Bad data is said once, naming its line, not by every stage in turn (a fraction of a second).
  const Splits splits = read_training_data(request.data_dir, request.files, request.seed, request.skip_bad_lines);
  data = {splits.data_sha256, splits.test.path, splits.test_split};
  std::vector<PlannedStage> plan;
  for (std::size_t i = 0; i < stages.size(); ++i) plan.push_back(plan_stage(request, stages, i, run_dir));
  // A stage folder a new bundle could not replace is found now, not after the stages before it.
  // Under --resume a kept stage replaces nothing; one trained again is checked when it trains.
  for (const PlannedStage& stage : request.resume ? std::vector<PlannedStage>{} : plan) {
    BundleWriter::check_target(stage.dir);
    if (offers(stage.name, request.compress)) BundleWriter::check_target(stage.dir + "-" + request.compress);
    if (adapts(request, stage.name)) BundleWriter::check_target(stage.dir + kAdaptedSuffix);
  }
  return plan;
}

// A data folder may hold pipeline_settings.json, {"settings": ["<stage>.<key>=value", ...]}: the
// settings its size calls for (the demo set's 3,000 titles would stop bert's defaults after a
// few dozen steps). They go before the user's --set, which wins; the report names them.
PipelineRequest with_data_settings(const PipelineRequest& request, std::string& data_note) {
  if (request.files.given()) return request;
  const DataLayout layout = resolve_data_dir(request.data_dir);
  const std::string path = layout.dir + "/" + kDataSettingsFile;
  if (!fs::exists(path)) return request;
  const nlohmann::json file = read_config_file(path);
  const auto settings = file.find("settings");
  if (settings == file.end() || !settings->is_array() ||
      !std::all_of(settings->begin(), settings->end(), [](const nlohmann::json& v) { return v.is_string(); })) {
    throw UsageError(path + ": \"settings\" must be a list of \"<stage>.<key>=value\" strings");
  }
  const std::vector<std::string> mine = settings->get<std::vector<std::string>>();
  PipelineRequest adjusted = request;
  adjusted.overrides = mine;
  adjusted.overrides.insert(adjusted.overrides.end(), request.overrides.begin(), request.overrides.end());
  const std::string what = layout.dir == kDemoDataDir
                               ? ", the demo set (3,000 training titles drawn from THUCNews; its figures are not "
                                 "THUCNews's: data/README.md says how to get the full data)"
                               : "";
  data_note = fmt::format("Data: {}{}, with the settings its {} gives for its size: {}.", layout.dir, what,
                          kDataSettingsFile, fmt::join(mine, ", "));
  return adjusted;
}

}  // namespace

const char* to_string(StageStatus status) {
  switch (status) {
    case StageStatus::kDone: return "done";
    case StageStatus::kResumed: return "resumed";
    case StageStatus::kSkipped: return "skipped";
    case StageStatus::kFailed: return "failed";
  }
  return "unknown";
}

bool PipelineSummary::any_failed() const {
  return std::any_of(stages.begin(), stages.end(),
                     [](const StageResult& r) { return r.status == StageStatus::kFailed; });
}

std::vector<std::string> overrides_for_stage(const std::vector<std::string>& overrides, const std::string& stage) {
  const std::vector<std::string> families = known_families();
  std::vector<std::string> mine;
  for (const std::string& o : overrides) {
    const std::size_t dot = o.find('.'), eq = o.find('=');
    if (dot == std::string::npos || eq == std::string::npos || dot > eq) {
      throw UsageError("pipeline --set expects <stage>.<key>=value, got '" + o + "'");
    }
    const std::string target = o.substr(0, dot);
    if (std::find(families.begin(), families.end(), target) == families.end()) {
      throw UsageError("pipeline --set names unknown stage '" + target + "'");
    }
    if (target == stage) mine.push_back(o.substr(dot + 1));
  }
  return mine;
}

PipelineSummary run_pipeline(const PipelineRequest& given) {
  PipelineSummary summary;
  const PipelineRequest request = with_data_settings(given, summary.data_note);
  summary.run_dir = request.out_dir.empty() ? "runs/" + timestamp() : request.out_dir;
  RunData data;
  const std::vector<PlannedStage> plan = plan_run(request, summary.run_dir, data);
  make_directories(summary.run_dir);  // only once the request holds up: a usage error leaves nothing
  std::vector<std::string> names;
  for (const PlannedStage& stage : plan) names.push_back(stage.name);
  spdlog::info("pipeline into {}: stages {}", summary.run_dir, fmt::join(names, ", "));
  std::map<std::string, StageStatus> outcomes;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    spdlog::info("stage {}/{}: {}", i + 1, plan.size(), plan[i].name);
    summary.stages.push_back(run_stage(request, plan[i], data, outcomes));
    const StageResult& r = summary.stages.back();
    spdlog::info("stage {}: {}{}{}", r.stage, to_string(r.status), r.reason.empty() ? "" : ": ", r.reason);
    write_status(summary.run_dir, summary.stages);
    outcomes[r.stage] = r.status;
    if (r.status != StageStatus::kDone && r.status != StageStatus::kResumed) {
      // Its compression and adaptation stages are listed, skipped, not dropped.
      for (const std::string& suffix : derived_stages(request, r.stage)) {
        summary.stages.push_back({r.stage + suffix, StageStatus::kSkipped, unusable_input({r.stage}, outcomes), 0});
        spdlog::info("stage {}: skipped: {}", summary.stages.back().stage, summary.stages.back().reason);
        write_status(summary.run_dir, summary.stages);
      }
      continue;
    }
    const bool resumed = r.status == StageStatus::kResumed;
    for (auto run_derived : {run_compression, run_adaptation}) {
      if (std::optional<StageResult> c = run_derived(request, plan[i].name, summary.run_dir, resumed, data)) {
        spdlog::info("stage {}: {}{}{}", c->stage, to_string(c->status), c->reason.empty() ? "" : ": ", c->reason);
        summary.stages.push_back(*c);
        write_status(summary.run_dir, summary.stages);
      }
    }
  }
  write_pipeline_report(summary, request);
  return summary;
}

}  // namespace newscls
