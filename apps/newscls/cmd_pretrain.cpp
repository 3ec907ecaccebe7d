#include <cstdio>
#include <memory>

#include "commands.h"
#include "common_options.h"
#include "newscls/workflow/pretrain_workflow.h"
#include "newscls/workflow/registry.h"

namespace newscls::app {
namespace {

void print_pretrain(const PretrainRequest& o, const PretrainOutcome& out) {
  if (!out.wrote_bundle) {
    std::printf("rank %d of %d done (rank 0 writes %s)\n", o.distributed.rank, o.distributed.world_size,
                out.out_dir.c_str());
    return;
  }
  std::printf("encoder bundle %s: %lld steps, mlm loss %.4f, %.0f titles/s\n", out.out_dir.c_str(),
              out.facts.value("pretrain_steps", 0LL), out.facts.value("pretrain_mlm_loss", 0.0),
              out.facts.value("pretrain_titles_per_s", 0.0));
}

}  // namespace

void setup_pretrain(CLI::App& app) {
  auto o = std::make_shared<PretrainRequest>();
  CLI::App* cmd = app.add_subcommand(
      "pretrain", "Pretrain a model family's encoder with masked-language modelling on the training titles");
  cmd->add_option("--model", o->family, "Model family with an encoder to pretrain")
      ->required()
      ->check(CLI::IsMember(pretraining_families()));
  add_data_option(*cmd, o->data_dir);
  cmd->add_option("--out", o->out_dir, "Encoder bundle directory to write (default: runs/<model>-encoder)")
      ->check(non_empty_path());
  cmd->add_option("--config", o->config_file, "JSON file overriding the family's default config");
  cmd->add_option("--set", o->overrides, "Override one config key, key=value (repeatable)");
  add_run_options(*cmd, o->seed, o->threads, o->skip_bad_lines);
  add_distributed_options(*cmd, o->distributed);
  cmd->callback([o] { print_pretrain(*o, run_pretrain(*o)); });
}

}  // namespace newscls::app
