#include <cstdio>
#include <memory>

#include "commands.h"
#include "common_options.h"
#include "newscls/workflow/audit_workflow.h"
#include "newscls/workflow/registry.h"

namespace newscls::app {

namespace {

// --train, --classes and --dev: the file judged instead of a data folder, and what reads it.
void add_audit_files_options(CLI::App& cmd, DataFiles& files, CLI::Option* data) {
  const char* group = "Labelled files (docs/DATA_FORMATS.md)";
  CLI::Option* train =
      cmd.add_option(
             "--train", files.train,
             "Training file to audit in any --format, instead of --data (labels: class names, or ids of --classes)")
          ->check(non_empty_path())
          ->excludes(data)
          ->group(group);
  cmd.add_option("--classes", files.classes,
                 "Class list, one name a line, ids from 0 (default: the label names of --train, sorted)")
      ->check(non_empty_path())
      ->needs(train)
      ->group(group);
  cmd.add_option(
         "--dev", files.dev,
         "Dev file each fold's model selects on (default: a stratified, seeded 10% of the fold's training titles)")
      ->check(non_empty_path())
      ->needs(train)
      ->group(group);
  add_format_options(cmd, files.format);
}

}  // namespace

void setup_audit(CLI::App& app) {
  auto request = std::make_shared<AuditRequest>();
  CLI::App* cmd = app.add_subcommand("audit",
                                     "Find training titles whose label is likely wrong (cross-validated confident "
                                     "learning) and write them to a CSV");
  cmd->add_option("--model", request->family, "Model family trained on the folds")
      ->required()
      ->check(CLI::IsMember(known_families()));
  add_audit_files_options(*cmd, request->files, add_data_option(*cmd, request->data_dir));
  cmd->add_option("--out", request->out,
                  "CSV to write (atomically; - = stdout): line,title,given,suggested,score, most likely wrong first")
      ->required()
      ->check(non_empty_path());
  cmd->add_option("--folds", request->folds, "Folds of the cross-validation (stratified by label, seeded)")
      ->capture_default_str()
      ->check(CLI::Range(2, 100));
  cmd->add_option(
         "--filter", request->filter,
         "Which doubtful titles are flagged: noise-rate (for each given and true class, as many as the confident "
         "joint estimates, largest margin first), class (for each given class, as many as estimated, lowest "
         "probability first), both, or joint (every title off the confident joint's diagonal)")
      ->capture_default_str()
      ->check(CLI::IsMember(audit_filter_names()));
  cmd->add_option("--config", request->config_file, "JSON file overriding the model's default config for the folds");
  cmd->add_option("--set", request->overrides, "Override one config key for the folds, key=value (repeatable)");
  add_run_options(*cmd, request->seed, request->threads, request->skip_bad_lines);
  cmd->callback([request] {
    const AuditOutcome outcome = run_audit(*request);
    std::fputs(audit_summary(outcome, request->out).c_str(), stderr);
  });
}

}  // namespace newscls::app
