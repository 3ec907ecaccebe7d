#include <memory>

#include "commands.h"
#include "common_options.h"
#include "newscls/workflow/predict_output.h"
#include "newscls/workflow/predict_workflow.h"

namespace newscls::app {

void setup_predict(CLI::App& app) {
  auto r = std::make_shared<PredictRequest>();
  auto format = std::make_shared<std::string>("jsonl");
  CLI::App* cmd = app.add_subcommand("predict", "Classify titles, one per line (title<TAB>label accepted)");
  add_model_dir_option(*cmd, r->model_dir);
  cmd->add_option("--input", r->input, "Titles file, or - for stdin")->capture_default_str()->check(non_empty_path());
  cmd->add_option("--output", r->output, "Results file (written atomically), or - for stdout")
      ->capture_default_str()
      ->check(non_empty_path());
  cmd->add_option("--format", *format, "jsonl or tsv")->capture_default_str()->check(CLI::IsMember({"jsonl", "tsv"}));
  cmd->add_option("--top-k", r->top_k, "Labels listed in top_k (jsonl)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  add_min_score_option(*cmd, r->min_score,
                       "Abstain (label null; TSV: empty) when the calibrated top score is below this");
  add_threads_option(*cmd, r->threads);
  cmd->callback([r, format] {
    r->format = parse_prediction_format(*format);
    run_predict(*r);
  });
}

}  // namespace newscls::app
