#include <cstdio>
#include <filesystem>
#include <memory>

#include <spdlog/spdlog.h>

#include "commands.h"
#include "common_options.h"
#include "newscls/bundle.h"
#include "newscls/data.h"
#include "newscls/error.h"
#include "newscls/parallel.h"
#include "newscls/workflow.h"

namespace newscls::app {
namespace {

struct PretrainOptions {
  std::string family, data_dir, out_dir, config_file;
  std::vector<std::string> overrides;
  std::uint64_t seed = 1;
  int threads = 0;
  bool skip_bad_lines = false;
  DistributedSettings distributed;
};

// An encoder written over a trained classifier (of any family) is almost always a mistyped
// --out: the classifier, its figures and predictions would be gone.
void refuse_classifier_at(const std::string& out_dir) {
  if (!std::filesystem::exists(out_dir + "/manifest.json")) return;
  const std::string family = Bundle::read_manifest(out_dir).family;
  const std::string kEncoder = "-encoder";
  if (family.size() > kEncoder.size() && family.compare(family.size() - kEncoder.size(), kEncoder.size(), kEncoder) == 0) return;
  throw UsageError("pretrain --out " + out_dir + " holds a '" + family +
                   "' bundle, not an encoder, which pretraining would replace: name another folder");
}

void run_pretrain(const PretrainOptions& o) {
  const Family& family = find_family(o.family);
  if (!family.pretrains()) throw UsageError("model family '" + o.family + "' has no encoder to pretrain");
  if (o.distributed.enabled() && !family.trains_distributed()) {
    throw UsageError("family '" + o.family + "' cannot pretrain distributed (WORLD_SIZE " +
                     std::to_string(o.distributed.world_size) + "); run it as one process (WORLD_SIZE=1)");
  }
  PretrainRequest request;
  request.config = build_config(o.family, o.config_file, o.overrides);  // a mistyped key before the data is read
  request.out_dir = o.out_dir.empty() ? "runs/" + o.family + "-encoder" : o.out_dir;
  if (o.distributed.rank == 0) {
    BundleWriter::check_target(request.out_dir);
    refuse_classifier_at(request.out_dir);
  }
  const DataLayout layout = resolve_data_dir(o.data_dir);
  const LabelSet labels = read_class_file(layout.classes());
  const Dataset train = read_labeled_file(layout.train(), labels.size(), ReadOptions{o.skip_bad_lines});
  request.train = &train;
  request.labels = &labels;
  request.seed = o.seed;
  request.threads = resolve_thread_count(o.threads);
  request.distributed = o.distributed;
  spdlog::info("pretraining a {} encoder on {} titles of {}", o.family, train.size(), layout.train());
  const nlohmann::json facts = family.pretrain(request);
  if (o.distributed.rank != 0) {
    std::printf("rank %d of %d done (rank 0 writes %s)\n", o.distributed.rank, o.distributed.world_size,
                request.out_dir.c_str());
    return;
  }
  std::printf("encoder bundle %s: %lld steps, mlm loss %.4f, %.0f titles/s\n", request.out_dir.c_str(),
              facts.value("pretrain_steps", 0LL), facts.value("pretrain_mlm_loss", 0.0),
              facts.value("pretrain_titles_per_s", 0.0));
}

}  // namespace

void setup_pretrain(CLI::App& app) {
  auto o = std::make_shared<PretrainOptions>();
  CLI::App* cmd = app.add_subcommand(
      "pretrain", "Pretrain a model family's encoder with masked-language modelling on the training titles");
  cmd->add_option("--model", o->family, "Model family with an encoder to pretrain")
      ->required()
      ->check(CLI::IsMember(pretraining_families()));
  add_data_option(*cmd, o->data_dir);
  cmd->add_option("--out", o->out_dir, "Encoder bundle directory to write (default: runs/<model>-encoder)")->check(non_empty_path());
  cmd->add_option("--config", o->config_file, "JSON file overriding the family's default config");
  cmd->add_option("--set", o->overrides, "Override one config key, key=value (repeatable)");
  add_seed_option(*cmd, o->seed);
  add_threads_option(*cmd, o->threads);
  add_skip_bad_lines_option(*cmd, o->skip_bad_lines);
  add_distributed_options(*cmd, o->distributed);
  cmd->callback([o] { run_pretrain(*o); });
}

}  // namespace newscls::app
