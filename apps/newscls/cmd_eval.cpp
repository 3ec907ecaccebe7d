#include <cstdio>
#include <memory>

#include "commands.h"
#include "common_options.h"
#include "newscls/workflow.h"

namespace newscls::app {

void setup_eval(CLI::App& app) {
  auto r = std::make_shared<EvalRequest>();
  CLI::App* cmd = app.add_subcommand("eval", "Evaluate a model bundle on a labelled split or file");
  add_model_dir_option(*cmd, r->model_dir);
  add_data_option(*cmd, r->data_dir);
  cmd->add_option("--split", r->split, "Split of the data directory")
      ->capture_default_str()
      ->check(CLI::IsMember({"test", "dev", "train"}));
  cmd->add_option("--input", r->input, "A labelled file (title<TAB>label_id) instead of a split");
  cmd->add_option("--out", r->out,
                  "metrics.json path (default: <model-dir>/metrics.json); confusion.svg and "
                  "predictions.tsv go next to it");
  add_seed_option(*cmd, r->seed);
  add_threads_option(*cmd, r->threads);
  add_skip_bad_lines_option(*cmd, r->skip_bad_lines);
  cmd->add_option("--dump-attention", r->dump_attention,
                  "Write attention heatmaps of the first N titles into attention/ next to metrics "
                  "(families with attention)");
  cmd->callback([r] {
    const EvalRun run = run_eval(*r);
    std::printf("%s on %s\n%s", run.family.c_str(), run.data_path.c_str(), format_metrics_table(run.metrics).c_str());
  });
}

}  // namespace newscls::app
