#include <cstdio>
#include <memory>

#include "commands.h"
#include "common_options.h"
#include "newscls/core/classifier.h"
#include "newscls/workflow/registry.h"
#include "newscls/workflow/train_workflow.h"
#include "stage_table.h"

namespace newscls::app {

namespace {

// --exclude and --relabel: what to do with the titles a `newscls audit` file flags.
void add_audit_use_options(CLI::App& cmd, TrainRequest& request) {
  const char* group = "Using an audit (newscls audit)";
  CLI::Option* exclude =
      cmd.add_option(
             "--exclude", request.exclude_file,
             "Audit CSV of newscls audit: train without the titles it flags (matched by line, checked by title)")
          ->check(non_empty_path())
          ->group(group);
  cmd.add_option("--relabel", request.relabel_file,
                 "Audit CSV of newscls audit: train with its suggested labels for the titles it flags")
      ->check(non_empty_path())
      ->excludes(exclude)
      ->group(group);
}

}  // namespace

void setup_train(CLI::App& app) {
  auto request = std::make_shared<TrainRequest>();
  CLI::App* cmd = app.add_subcommand(
      "train", "Train a model on the train split (a --data folder's or --train's), select on dev, evaluate on test");
  cmd->add_option("--model", request->family, "Model family")->required()->check(CLI::IsMember(known_families()));
  add_data_files_options(*cmd, request->files, add_data_option(*cmd, request->data_dir));
  cmd->add_option("--out", request->out_dir, "Bundle directory to write (default: runs/<model>)")
      ->check(non_empty_path());
  cmd->add_option("--config", request->config_file, "JSON file overriding the model's default config");
  cmd->add_option("--set", request->overrides, "Override one config key, key=value (repeatable)");
  add_run_options(*cmd, request->seed, request->threads, request->skip_bad_lines);
  cmd->add_flag("--resume", request->resume, "Continue from the last checkpoint in <out>.work (bert)");
  cmd->add_option(
      "--init", request->init_dir,
      "Start from a pretrained encoder: a bundle of newscls pretrain, or hf:DIR (a Hugging Face checkpoint)");
  // Debian's LibTorch has no CUDA, so the help offers only what this build can run.
  cmd->add_option("--device", request->device, "Device to train on (bert); this build runs on the CPU only")
      ->capture_default_str()
      ->check(CLI::IsMember({"cpu"}));
  add_distributed_options(*cmd, request->distributed);
  const RenamedOption unlabeled =
      add_unlabeled_option(*cmd, request->unlabeled, "your own feed, which the model adapts to ('-' = stdin)");
  add_self_training_options(*cmd, request->self_training, request->teacher_dirs);
  add_audit_use_options(*cmd, *request);
  cmd->callback([request, unlabeled] {
    unlabeled.check();
    const TrainOutcome outcome = train_model(*request);
    if (!outcome.wrote_bundle) {
      std::printf("rank %d of %d done (rank 0 writes %s)\n", request->distributed.rank, request->distributed.world_size,
                  outcome.out_dir.c_str());
      return;
    }
    std::printf("%s on %s (bundle %s)\n%s", request->family.c_str(), outcome.test_split.c_str(),
                outcome.out_dir.c_str(), format_metrics_table(outcome.test_metrics).c_str());
    print_stage_table(outcome.metrics_json);
    const nlohmann::json& training = outcome.metrics_json.value("training", nlohmann::json::object());
    if (training.value("selection", nlohmann::json::object()).value("requests_sent", 0LL) > 0) {
      std::printf("choosing the thresholds on dev: requests sent %s   cost %.4f USD\n",
                  training["selection"]["requests_sent"].dump().c_str(), training["selection"].value("cost_usd", 0.0));
    }
  });
}

}  // namespace newscls::app
