#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "common_options.h"
#include "newscls/core/error.h"
#include "newscls/pipeline/pipeline.h"
#include "newscls/workflow/registry.h"

namespace newscls::app {
namespace {

// "tfidf-rf,fasttext" as its stages; an empty name ("a,,b", "a,") or an unknown one is refused
// (CLI11's list option dropped empty names, and took the next argument for a list of none).
std::vector<std::string> stage_list(const std::string& text) {
  const std::vector<std::string> known = known_families();
  std::string names;
  for (const std::string& f : known) names += (names.empty() ? "" : ", ") + f;
  std::vector<std::string> stages;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string name = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (name.empty()) throw UsageError("--stages '" + text + "': a stage name is empty (stages: " + names + ")");
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      throw UsageError("--stages: '" + name + "' is not a stage (stages: " + names + ")");
    }
    stages.push_back(name);
    if (comma == std::string::npos) return stages;
    start = comma + 1;
  }
}

}  // namespace

void setup_pipeline(CLI::App& app) {
  auto r = std::make_shared<PipelineRequest>();
  CLI::App* cmd = app.add_subcommand(
      "pipeline", "Train and evaluate every stage in order into one run folder, then write report.md and report.html");
  add_data_files_options(*cmd, r->files, add_data_option(*cmd, r->data_dir));
  cmd->add_option("--out", r->out_dir, "Run folder (default: runs/<timestamp>)")->check(non_empty_path());
  auto stages = std::make_shared<std::string>();
  CLI::Option* stages_option = cmd->add_option("--stages", *stages, "Comma-separated stages, in the order to run");
  cmd->add_option("--config-dir", r->config_dir, "Folder with <stage>.json config overrides");
  cmd->add_option("--set", r->overrides, "Override a stage's config key: <stage>.<key>=value (repeatable)");
  add_run_options(*cmd, r->seed, r->threads, r->skip_bad_lines);
  cmd->add_flag("--resume", r->resume,
                "Continue the run named by --out: skip stages whose bundle and metrics are complete; resume bert from "
                "its checkpoint");
  CLI::Option* compress =
      cmd->add_option("--compress", r->compress,
                      "Compression stage after each stage whose family offers this method (newscls compress, "
                      "default settings); none to skip (the default with --train)")
          ->capture_default_str();
  const RenamedOption unlabeled = add_unlabeled_option(
      *cmd, r->unlabeled,
      "your own feed: a stage <stage>-adapted adapts each local stage to it (newscls adapt, default settings)");
  cmd->add_option("--attention-titles", r->attention_titles,
                  "Attention heatmaps shown in the report (families with attention; at most 100)")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{0}, std::size_t{100}));
  cmd->callback([r, stages, stages_option, compress, unlabeled] {
    unlabeled.check();
    if (stages_option->count() > 0) r->stages = stage_list(*stages);
    if (r->files.given() && compress->count() == 0) r->compress = "none";  // it reads a --data folder's splits
    // Without it, a fresh runs/<timestamp> was made and every stage trained again, exit 0.
    if (r->resume && r->out_dir.empty()) throw UsageError("--resume: name the run folder to continue with --out");
    const PipelineSummary summary = run_pipeline(*r);
    int width = 10;
    for (const StageResult& s : summary.stages) width = std::max(width, static_cast<int>(s.stage.size()));
    for (const StageResult& s : summary.stages) {
      std::printf("%-*s %-8s %s\n", width, s.stage.c_str(), to_string(s.status), s.reason.c_str());
    }
    std::printf("report: %s/report.html\n", summary.run_dir.c_str());
    if (summary.any_failed())
      throw Error(ErrorKind::kData, "a stage failed (see above and " + summary.run_dir + "/pipeline.json)");
  });
}

}  // namespace newscls::app
