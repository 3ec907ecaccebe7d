#include <cstdio>
#include <memory>
#include <string>

#include <sys/stat.h>

#include "commands.h"
#include "common_options.h"
#include "newscls/workflow/eval_workflow.h"
#include "stage_table.h"

namespace newscls::app {

namespace {

std::string fixed4(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", v);
  return buf;
}

// Abstention and cascade figures, when the run has them.
void print_eval_extras(const nlohmann::json& report, std::FILE* to) {
  if (report.contains("abstention")) {
    const auto& a = report["abstention"];
    const std::string accuracy =
        a["accuracy_answered"].is_null() ? "n/a" : fixed4(a["accuracy_answered"].get<double>());
    std::fprintf(to, "\nmin score %.9g: coverage %.4f (%zu of %zu answered), accuracy on answered %s\n",
                 a["min_score"].get<double>(), a["coverage"].get<double>(), a["answered"].get<std::size_t>(),
                 a["count"].get<std::size_t>(), accuracy.c_str());
  }
  print_stage_table(report, to);
}

// `--out /dev/stdout` (or `--out m.json > m.json`): the metrics go where stdout goes, a
// file or a pipe, and the report printed after them would make the JSON unreadable (or be
// lost), so it goes to stderr. Asked before the run: the metrics' rename then gives the path
// another file. (`--out /dev/null > /dev/null` keeps it on stdout.)
bool out_is_stdout(const std::string& out) {
  struct stat path_stat {
  }, stdout_stat{};
  if (out.empty() || ::stat(out.c_str(), &path_stat) != 0 || ::fstat(1, &stdout_stat) != 0) return false;
  const bool data = S_ISREG(stdout_stat.st_mode) || S_ISFIFO(stdout_stat.st_mode) || S_ISSOCK(stdout_stat.st_mode);
  return data && path_stat.st_dev == stdout_stat.st_dev && path_stat.st_ino == stdout_stat.st_ino;
}

}  // namespace

void setup_eval(CLI::App& app) {
  auto r = std::make_shared<EvalRequest>();
  CLI::App* cmd = app.add_subcommand("eval", "Evaluate a model bundle on a labelled split or file");
  add_model_dir_option(*cmd, r->model_dir);
  add_data_option(*cmd, r->data_dir);
  CLI::Option* split = cmd->add_option("--split", r->split, "Split of the data directory")
                           ->capture_default_str()
                           ->check(CLI::IsMember({"test", "dev", "train"}));
  CLI::Option* input =
      cmd->add_option("--input", r->input,
                      "A labelled file in any --format instead of a split; its labels are the model's class "
                      "names or ids (with --data, ids of its class.txt)")
          ->check(non_empty_path())
          ->excludes(split);
  add_format_options(*cmd, r->format);
  for (const char* name : {"--format", "--text-column", "--label-column"}) cmd->get_option(name)->needs(input);
  cmd->add_option("--out", r->out,
                  "metrics.json path (default: <model-dir>/metrics.json); confusion.svg and "
                  "predictions.tsv go next to it")
      ->check(non_empty_path());
  add_run_options(*cmd, r->seed, r->threads, r->skip_bad_lines);
  cmd->add_option("--dump-attention", r->dump_attention,
                  "Write attention heatmaps of the first N titles into attention/ next to metrics "
                  "(families with attention)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1} << 20));
  add_min_score_option(*cmd, r->min_score,
                       "Also report coverage and accuracy of the titles whose top score (calibrated unless "
                       "--uncalibrated) is at least this");
  cmd->add_flag("--fit-calibration", r->fit_calibration,
                "Fit the temperature on dev (--split dev) and store it in the bundle (for bundles trained without it)");
  cmd->add_flag("--uncalibrated", r->uncalibrated, "Ignore the bundle's calibration (to compare before and after)");
  cmd->callback([r] {
    std::FILE* to = out_is_stdout(r->out) ? stderr : stdout;
    const EvalRun run = run_eval(*r);
    std::fprintf(to, "%s on %s\n%s", run.family.c_str(), run.data_path.c_str(),
                 format_metrics_table(run.metrics).c_str());
    print_eval_extras(run.report, to);
  });
}

}  // namespace newscls::app
