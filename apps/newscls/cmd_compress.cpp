#include <cstdio>
#include <memory>

#include <spdlog/spdlog.h>

#include "commands.h"
#include "common_options.h"
#include "newscls/workflow/compress_workflow.h"

namespace newscls::app {
namespace {

void print_summary(const nlohmann::json& r) {
  const auto& b = r["before"];
  const auto& a = r["after"];
  std::printf("%s -> %s (%s)\n", r["source"].get<std::string>().c_str(), a["bundle"].get<std::string>().c_str(),
              r["method"].get<std::string>().c_str());
  std::printf("  bundle MB      %9.2f -> %9.2f  (%.2fx smaller)\n", b["bundle_mb"].get<double>(),
              a["bundle_mb"].get<double>(), r["size_ratio"].get<double>());
  std::printf("  dev accuracy   %9.4f -> %9.4f\n", b["dev"]["accuracy"].get<double>(),
              a["dev"]["accuracy"].get<double>());
  std::printf("  test accuracy  %9.4f -> %9.4f\n", b["test"]["accuracy"].get<double>(),
              a["test"]["accuracy"].get<double>());
  std::printf("  predict t/s    %9.0f -> %9.0f  (%.2fx)\n", b["predict_titles_per_s"].get<double>(),
              a["predict_titles_per_s"].get<double>(), r["speed"]["speedup"].get<double>());
}

}  // namespace

void setup_compress(CLI::App& app) {
  auto o = std::make_shared<CompressRequest>();
  CLI::App* cmd = app.add_subcommand(
      "compress",
      "Make a trained bundle smaller or faster (prune, quantize, distill) and measure it beside the original");
  add_model_dir_option(*cmd, o->model_dir);
  cmd->add_option("--method", o->method, "Compression method of the bundle's family (e.g. prune, quantize, distill)")
      ->required();
  cmd->add_option("--out", o->out_dir, "Bundle directory to write (compression.json goes inside)")
      ->required()
      ->check(non_empty_path());
  cmd->add_option("--set", o->overrides, "Set one of the method's settings, key=value (repeatable)");
  cmd->add_option("--teacher", o->teacher_dirs,
                  "Distillation: a bundle whose probabilities the student learns (repeatable; averaged; "
                  "default the --model-dir bundle)");
  const RenamedOption unlabeled = add_unlabeled_option(
      *cmd, o->unlabelled_file, "distillation: extra titles the student learns the teachers' answers on");
  cmd->add_option("--speed-titles", o->speed_titles, "Measure predict titles/s on the first N dev titles (0 = all)")
      ->capture_default_str();
  add_data_option(*cmd, o->data_dir);
  add_run_options(*cmd, o->seed, o->threads, o->skip_bad_lines);
  cmd->callback([o, unlabeled] {
    unlabeled.check();
    const nlohmann::json report = run_compress(*o);
    spdlog::info("compression report in {}/compression.json", o->out_dir);
    print_summary(report);
  });
}

}  // namespace newscls::app
