#include "newscls/pipeline.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>

#include <spdlog/fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "newscls/atomic_file.h"
#include "newscls/bundle.h"
#include "newscls/classifier.h"
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

bool env_set(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  return v != nullptr && *v != '\0';
}

bool has_override(const std::vector<std::string>& overrides, const std::string& key) {
  for (const std::string& o : overrides) {
    if (o.rfind(key + "=", 0) == 0) return true;
  }
  return false;
}

// Empty when the LLM stage can run; otherwise why not.
std::string llm_skip_reason(const std::vector<std::string>& overrides) {
  if (has_override(overrides, "base_url")) return {};
  if (env_set("NEWSCLS_LLM_API_KEY") || env_set("DEEPSEEK_API_KEY")) return {};
  for (const std::string& o : overrides) {
    if (o.rfind("api_key_env=", 0) == 0 && env_set(o.substr(12))) return {};
  }
  return "no API key: set NEWSCLS_LLM_API_KEY (or DEEPSEEK_API_KEY), or --set llm.base_url=URL for a local server";
}

bool stage_complete(const std::string& dir) {
  if (!fs::exists(dir + "/metrics.json")) return false;
  try {
    Bundle::open(dir);
    return true;
  } catch (const Error&) {
    return false;
  }
}

void write_status(const std::string& run_dir, const std::vector<StageResult>& results) {
  nlohmann::json stages = nlohmann::json::array();
  for (const StageResult& r : results) {
    stages.push_back({{"stage", r.stage}, {"status", r.status}, {"reason", r.reason}, {"wall_seconds", r.wall_seconds}});
  }
  write_file_atomic(run_dir + "/pipeline.json", nlohmann::json{{"stages", stages}}.dump(2) + "\n");
}

StageResult run_stage(const PipelineRequest& request, const std::string& stage, const std::string& stage_dir) {
  StageResult result{stage, "done", "", 0};
  const std::vector<std::string> overrides = overrides_for_stage(request.overrides, stage);
  if (request.resume && stage_complete(stage_dir)) {
    result.status = "resumed";
    result.reason = "bundle and metrics already complete";
    return result;
  }
  if (stage == "llm") {
    result.reason = llm_skip_reason(overrides);
    if (!result.reason.empty()) {
      result.status = "skipped";
      return result;
    }
  }
  TrainRequest train;
  train.family = stage;
  train.data_dir = request.data_dir;
  train.out_dir = stage_dir;
  const std::string config_file = request.config_dir.empty() ? "" : request.config_dir + "/" + stage + ".json";
  if (!config_file.empty() && fs::exists(config_file)) train.config_file = config_file;
  train.overrides = overrides;
  train.seed = request.seed;
  train.threads = request.threads;
  train.skip_bad_lines = request.skip_bad_lines;
  train.resume = request.resume;
  const auto start = std::chrono::steady_clock::now();
  try {
    train_model(train);
  } catch (const InterruptedError&) {
    throw;
  } catch (const UsageError&) {
    throw;  // a mistyped flag is the user's to fix before anything runs
  } catch (const std::exception& e) {
    result.status = "failed";
    result.reason = e.what();
    spdlog::error("stage {} failed: {}", stage, e.what());
  }
  result.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace

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
  make_directories(summary.run_dir);
  const std::vector<std::string> stages = request.stages.empty() ? known_families() : request.stages;
  for (const std::string& stage : stages) {
    make_classifier(stage);  // an unknown or unbuilt stage stops before any work
    overrides_for_stage(request.overrides, stage);
  }
  spdlog::info("pipeline into {}: stages {}", summary.run_dir, fmt::join(stages, ", "));
  for (std::size_t i = 0; i < stages.size(); ++i) {
    spdlog::info("stage {}/{}: {}", i + 1, stages.size(), stages[i]);
    summary.stages.push_back(run_stage(request, stages[i], summary.run_dir + "/" + stages[i]));
    const StageResult& r = summary.stages.back();
    spdlog::info("stage {}: {}{}{}", r.stage, r.status, r.reason.empty() ? "" : ": ", r.reason);
    write_status(summary.run_dir, summary.stages);
  }
  write_pipeline_report(summary, request);
  return summary;
}

}  // namespace newscls
