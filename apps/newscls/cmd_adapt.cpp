#include <cstdio>
#include <memory>

#include "commands.h"
#include "common_options.h"
#include "newscls/core/metrics.h"
#include "newscls/workflow/adapt_workflow.h"

namespace newscls::app {

void setup_adapt(CLI::App& app) {
  auto request = std::make_shared<AdaptRequest>();
  CLI::App* cmd =
      app.add_subcommand("adapt",
                         "Adapt a trained model to your own feed's titles, without labels (self-training; bert also "
                         "continues pretraining on them); writes a new bundle");
  add_model_dir_option(*cmd, request->model_dir);
  const RenamedOption unlabeled = add_unlabeled_option(
      *cmd, request->unlabeled, "your own feed, which the bundle adapts to ('-' = stdin; required)", /*required=*/true);
  cmd->add_option("--out", request->out_dir, "Bundle directory to write (the source bundle is kept)")
      ->required()
      ->check(non_empty_path());
  CLI::Option* data = cmd->add_option("--data", request->data_dir,
                                      "Labelled data directory (default: the folder the bundle was trained on)")
                          ->check(non_empty_path());
  add_data_files_options(*cmd, request->files, data);
  add_self_training_options(*cmd, request->self_training, request->teacher_dirs);
  cmd->add_option("--set", request->overrides,
                  "Override one of the bundle's config keys for the retraining, key=value (repeatable; e.g. "
                  "continued_pretrain_epochs=20: bert continues pretraining longer)");
  add_answer_options(*cmd, request->label_files, request->label_format,
                     "Your answers to `newscls ask` (its CSV with the label column filled in: a class name, none, or "
                     "empty); the titles answered with a class join the training titles (repeatable)");
  cmd->add_option("--answer-copies", request->answer_copies,
                  "How many times each answered title counts among the training titles")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  add_run_options(*cmd, request->seed, request->threads, request->skip_bad_lines);
  cmd->callback([request, unlabeled] {
    unlabeled.check();
    const TrainOutcome outcome = adapt_model(*request);
    std::printf("adapted %s on test (bundle %s)\n%s", request->model_dir.c_str(), outcome.out_dir.c_str(),
                format_metrics_table(outcome.test_metrics).c_str());
  });
}

}  // namespace newscls::app
