#include "newscls/workflow/pretrain_workflow.h"

#include <filesystem>

#include <spdlog/spdlog.h>

#include "newscls/core/bundle.h"
#include "newscls/core/data.h"
#include "newscls/core/error.h"
#include "newscls/core/parallel.h"
#include "newscls/workflow/registry.h"
#include "newscls/workflow/train_workflow.h"

namespace newscls {
namespace {

// An encoder written over a trained classifier (of any family) is almost always a mistyped
// --out: the classifier, its figures and predictions would be gone.
void refuse_classifier_at(const std::string& out_dir) {
  if (!std::filesystem::exists(manifest_path(out_dir))) return;
  const std::string family = Bundle::read_manifest(out_dir).family;
  const std::string kEncoder = "-encoder";
  if (family.size() > kEncoder.size() &&
      family.compare(family.size() - kEncoder.size(), kEncoder.size(), kEncoder) == 0)
    return;
  throw UsageError("pretrain --out " + out_dir + " holds a '" + family +
                   "' bundle, not an encoder, which pretraining would replace: name another folder");
}

const Family& pretraining_family(const PretrainRequest& o) {
  const Family& family = find_family(o.family);
  if (!family.pretrains()) throw UsageError("model family '" + o.family + "' has no encoder to pretrain");
  if (o.distributed.enabled() && !family.trains_distributed()) {
    throw UsageError("family '" + o.family + "' cannot pretrain distributed (WORLD_SIZE " +
                     std::to_string(o.distributed.world_size) + "); run it as one process (WORLD_SIZE=1)");
  }
  return family;
}

}  // namespace

PretrainOutcome run_pretrain(const PretrainRequest& o) {
  const Family& family = pretraining_family(o);
  PretrainContext request;
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
  request.threads = given_thread_count(o.threads);
  request.distributed = o.distributed;
  spdlog::info("pretraining a {} encoder on {} titles of {}", o.family, train.size(), layout.train());
  return {request.out_dir, family.pretrain(request), o.distributed.rank == 0};
}

}  // namespace newscls
