#include "newscls/pipeline.h"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <optional>
#include <set>

#include <spdlog/fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "newscls/atomic_file.h"
#include "newscls/bundle.h"
#include "newscls/compress_workflow.h"
#include "newscls/registry.h"
#include "newscls/stopwatch.h"
#include "newscls/error.h"
#include "newscls/workflow.h"
#include "pipeline/report.h"

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

// What --resume needs of a finished stage: the settings and data this run would train it with.
struct Expected {
  nlohmann::json config;
  std::uint64_t seed = 1;
  std::string data_sha256;
};

// Empty when the bundle in dir is complete and was trained as this run asks; else why not.
std::string not_resumable(const std::string& dir, const Expected& want) {
  for (const char* file : {"metrics.json", "predictions.tsv"}) {
    if (!fs::exists(dir + "/" + file)) return std::string("no ") + file + " yet";
  }
  try {
    const Bundle bundle = Bundle::open(dir);
    const Manifest& m = bundle.manifest();
    if (m.config != want.config) return "its config differs from this run's";
    if (!m.training.contains("seed") || m.training["seed"] != want.seed) return "its seed differs from this run's";
    if (m.training.value("data_sha256", std::string()) != want.data_sha256) return "it was trained on other data";
    return {};
  } catch (const Error& e) {
    return std::string("its bundle does not verify: ") + e.what();
  }
}

// A stage reading a bundle retrained in this run (a cascade's members) is retrained too.
std::string retrained_input(const std::vector<std::string>& inputs, const std::set<std::string>& retrained) {
  for (const std::string& input : inputs) {
    if (retrained.count(fs::path(input).filename().string())) return "it reads " + input + ", trained again in this run";
  }
  return {};
}

void write_status(const std::string& run_dir, const std::vector<StageResult>& results) {
  nlohmann::json stages = nlohmann::json::array();
  for (const StageResult& r : results) {
    stages.push_back({{"stage", r.stage}, {"status", to_string(r.status)}, {"reason", r.reason}, {"wall_seconds", r.wall_seconds}});
  }
  write_file_atomic(run_dir + "/pipeline.json", nlohmann::json{{"stages", stages}}.dump(2) + "\n");
}

TrainRequest train_request(const PipelineRequest& request, const std::string& stage, const std::string& stage_dir) {
  TrainRequest train;
  train.family = stage;
  train.data_dir = request.data_dir;
  train.out_dir = stage_dir;
  const std::string config_file = request.config_dir.empty() ? "" : request.config_dir + "/" + stage + ".json";
  if (!config_file.empty() && fs::exists(config_file)) train.config_file = config_file;
  train.overrides = overrides_for_stage(request.overrides, stage);
  train.seed = request.seed;
  train.threads = request.threads;
  train.skip_bad_lines = request.skip_bad_lines;
  train.resume = request.resume;
  return train;
}

// config: the stage's effective config, built (and so checked) before any stage ran.
StageResult run_stage(const PipelineRequest& request, const std::string& stage, const std::string& stage_dir,
                      const nlohmann::json& config, const std::string& data_sha256,
                      const std::set<std::string>& retrained) {
  StageResult result{stage, StageStatus::kDone, "", 0};
  const TrainRequest train = train_request(request, stage, stage_dir);
  if (request.resume) {
    std::string why = retrained_input(find_family(stage).trains_from(config), retrained);
    if (why.empty()) why = not_resumable(stage_dir, {config, request.seed, data_sha256});
    if (why.empty()) {
      result.status = StageStatus::kResumed;
      result.reason = "bundle and metrics already complete";
      return result;
    }
    if (fs::exists(stage_dir)) spdlog::info("stage {}: not resumed: {}", stage, why);
  }
  const Stopwatch watch;
  try {
    result.reason = find_family(stage).unavailable_reason(config);
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
    spdlog::error("stage {} failed: {}", stage, e.what());
  }
  result.wall_seconds = watch.seconds();
  return result;
}

// Its source stage was resumed too (else the compression is of an older bundle).
bool compression_complete(const std::string& dir) {
  if (!fs::exists(dir + "/compression.json") || !fs::exists(dir + "/metrics.json")) return false;
  try {
    Bundle::open(dir);
    return true;
  } catch (const Error&) {
    return false;
  }
}

// The request's compression of a finished stage's bundle, as a stage of its own named
// "<stage>-<method>"; nullopt when the run asks for none or the family lacks the method.
std::optional<StageResult> run_compression(const PipelineRequest& request, const std::string& stage,
                                           const std::string& run_dir, bool source_resumed) {
  const std::vector<std::string> methods = find_family(stage).compress_methods();
  if (std::find(methods.begin(), methods.end(), request.compress) == methods.end()) return std::nullopt;
  CompressOptions o;
  o.method = request.compress;
  o.model_dir = run_dir + "/" + stage;
  StageResult result{stage + "-" + o.method, StageStatus::kDone, "", 0};
  o.out_dir = run_dir + "/" + result.stage;
  if (request.resume && source_resumed && compression_complete(o.out_dir)) {
    result.status = StageStatus::kResumed;
    result.reason = "bundle and compression.json already complete";
    return result;
  }
  o.data_dir = request.data_dir;
  o.seed = request.seed;
  o.threads = request.threads;
  o.skip_bad_lines = request.skip_bad_lines;
  const Stopwatch watch;
  try {
    run_compress(o);
  } catch (const InterruptedError&) {
    throw;
  } catch (const std::exception& e) {
    result.status = StageStatus::kFailed;
    result.reason = e.what();
    spdlog::error("stage {} failed: {}", result.stage, e.what());
  }
  result.wall_seconds = watch.seconds();
  return result;
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
  return std::any_of(stages.begin(), stages.end(), [](const StageResult& r) { return r.status == StageStatus::kFailed; });
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

PipelineSummary run_pipeline(const PipelineRequest& request) {
  PipelineSummary summary;
  summary.run_dir = request.out_dir.empty() ? "runs/" + timestamp() : request.out_dir;
  const std::vector<std::string> stages = request.stages.empty() ? known_families() : request.stages;
  std::vector<nlohmann::json> configs;
  for (const std::string& stage : stages) {
    find_family(stage);  // an unknown or unloadable stage stops before any work
    // A mistyped key is the user's to fix before anything runs, not a stage failure later.
    const TrainRequest train = train_request(request, stage, summary.run_dir + "/" + stage);
    try {
      configs.push_back(build_config(stage, train.config_file, train.overrides));
    } catch (const ConfigError& e) {
      throw UsageError("stage " + stage + ": " + e.what());
    }
  }
  make_directories(summary.run_dir);  // only once the request holds up: a usage error leaves nothing
  const std::string data_sha256 = request.resume ? data_fingerprint(resolve_data_dir(request.data_dir)) : "";
  std::set<std::string> retrained;
  spdlog::info("pipeline into {}: stages {}", summary.run_dir, fmt::join(stages, ", "));
  for (std::size_t i = 0; i < stages.size(); ++i) {
    spdlog::info("stage {}/{}: {}", i + 1, stages.size(), stages[i]);
    summary.stages.push_back(
        run_stage(request, stages[i], summary.run_dir + "/" + stages[i], configs[i], data_sha256, retrained));
    const StageResult& r = summary.stages.back();
    spdlog::info("stage {}: {}{}{}", r.stage, to_string(r.status), r.reason.empty() ? "" : ": ", r.reason);
    write_status(summary.run_dir, summary.stages);
    if (r.status != StageStatus::kResumed) retrained.insert(r.stage);
    if (r.status != StageStatus::kDone && r.status != StageStatus::kResumed) continue;
    const bool resumed = r.status == StageStatus::kResumed;
    if (std::optional<StageResult> c = run_compression(request, stages[i], summary.run_dir, resumed)) {
      spdlog::info("stage {}: {}{}{}", c->stage, to_string(c->status), c->reason.empty() ? "" : ": ", c->reason);
      summary.stages.push_back(*c);
      write_status(summary.run_dir, summary.stages);
    }
  }
  write_pipeline_report(summary, request);
  return summary;
}

}  // namespace newscls
