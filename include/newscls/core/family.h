// What a model family tells the rest of newscls about itself: its documented defaults, how to
// make a classifier, whether it can run now, what it offers beyond classifying.
//
// Each family folder defines one Family and registers it in its CMakeLists.txt with
// newscls_register_family(); the registry (include/newscls/workflow/registry.h) is built from those
// registrations, so no other code lists the families or asks which one a model is.
//
//   const Family& f = find_family("fasttext");
//   nlohmann::json cfg = strip_docs(f.default_config());
//   std::unique_ptr<Classifier> model = f.make_classifier();
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "newscls/core/bundle.h"
#include "newscls/core/classifier.h"
#include "newscls/core/config_table.h"
#include "newscls/core/data.h"

namespace newscls {

// What a family's operations are given is a ...Context (as Classifier::train's TrainContext);
// what the commands give the workflows is a ...Request (include/newscls/workflow/).

// `newscls pretrain`: an encoder learnt from unlabelled use of the training titles.
struct PretrainContext {
  nlohmann::json config;  // the family's full effective config
  const Dataset* train = nullptr;
  const LabelSet* labels = nullptr;
  // A reader's feed (adaptation): pretrained on beside the training titles, and its frequent
  // characters join the vocabulary.
  const std::vector<std::string>* unlabeled = nullptr;
  // A trained bundle of the family whose encoder pretraining continues on the feed alone
  // (domain-adaptive pretraining) instead of starting afresh; empty: a new encoder.
  std::string continue_from;
  std::uint64_t seed = 1;
  int threads = 1;
  std::string out_dir;
  DistributedSettings distributed;  // rank 0 writes the bundle
};

// `newscls import-hf`: a checkpoint of another framework turned into a bundle.
struct ImportContext {
  std::string format;     // e.g. "huggingface-bert"
  std::string model_dir;  // the checkpoint's folder
  std::string out_dir;    // the bundle to write
};

// `newscls compress`: a smaller or faster bundle made from a trained one (compress_workflow.h
// measures it beside the original afterwards).
struct CompressContext {
  std::string method;                  // e.g. "prune", "quantize", "distill"
  std::string model_dir;               // the bundle to compress (for distillation, the teacher)
  std::vector<std::string> overrides;  // the method's settings, key=value
  const Dataset* train = nullptr;
  const Dataset* dev = nullptr;
  const LabelSet* labels = nullptr;
  std::vector<std::string> unlabelled;  // extra titles without labels (distillation)
  // Soft labels of the teachers (--teacher, any family; default the bundle itself): one row
  // of probabilities per title, averaged over the teachers. Set by the workflow, which can load
  // any family; a family cannot.
  std::function<std::vector<std::vector<float>>(const std::vector<std::string>&)> teacher_probs;
  std::uint64_t seed = 1;
  int threads = 1;
  std::string out_dir;  // the new bundle, committed atomically
};

// How the compress workflow averages the teachers' probabilities for a method that learns
// from teachers (Family::teacher_weighting).
struct TeacherWeighting {
  std::string setting = "equal";  // as the user gave it, for compression.json
  bool choose_on_dev = false;     // the workflow picks the weights of best dev accuracy
  std::vector<double> weights;    // one per teacher, summing to 1; empty = equal
};

class Family {
 public:
  virtual ~Family() = default;
  virtual std::string name() const = 0;

  // The keys of the family's config table (newscls/core/config_table.h): the single source of
  // its defaults, their docs and the values they accept.
  virtual const std::vector<ConfigKey>& config_keys() const = 0;
  // The defaults with their "_doc" strings, in the table's order: what configs/<name>.json holds
  // (scripts/gen_configs.sh writes it from `newscls info --defaults <name>`).
  nlohmann::ordered_json documented_config() const;
  nlohmann::json default_config() const { return documented_config(); }
  virtual std::unique_ptr<Classifier> make_classifier() const = 0;

  // Empty when a stage with this effective config can run here and now; else why not and
  // how to fix it (the pipeline reports the stage as skipped with this reason).
  virtual std::string unavailable_reason(const nlohmann::json& config) const { return {}; }
  // The bundles its training reads, as configured (a cascade's members: folders, or bare names
  // of stages of the same pipeline run); a pipeline retrains it when one of them was retrained.
  virtual std::vector<std::string> trains_from(const nlohmann::json& config) const { return {}; }
  // The config with the bundles trains_from names replaced, in order, by these (as many): the
  // pipeline points the names of its own stages at their folders in the run with it.
  virtual nlohmann::json with_trains_from(nlohmann::json config, const std::vector<std::string>& bundles) const {
    return config;
  }
  // Whether its answers are its members' calibrated probabilities (a cascade): it has no
  // temperature of its own to fit, so train refuses a calibrate= setting for it.
  virtual bool calibrated_by_members() const { return false; }
  // Whether each prediction is a paid request (an LLM): train then skips calibration unless
  // asked, as each dev title would cost a call.
  virtual bool pays_per_prediction() const { return false; }
  // Whether its classifiers implement Classifier::dump_attention.
  virtual bool has_attention() const { return false; }
  // Whether train (and pretrain) accept DistributedSettings with world_size > 1.
  virtual bool trains_distributed() const { return false; }
  // Whether train starts from TrainContext::init_dir (--init) and runs on TrainContext::device
  // (--device); train refuses both for a family that would ignore them.
  virtual bool trains_from_init() const { return false; }
  virtual bool trains_on_device() const { return false; }
  // Self-training rounds `adapt` and `train --unlabeled` run unless told (--rounds): those that
  // helped this family on dev and on signals needing no label of the feed (docs/BENCHMARKS.md,
  // "Adapting to another outlet").
  virtual int default_self_training_rounds() const { return 0; }
  // Whether train keeps checkpoints in TrainContext::work_dir that --resume continues.
  virtual bool resumes() const { return false; }
  // Config keys that change how a training runs, not what it computes (threads, prediction
  // batches): --resume and the ranks of a distributed run do not compare them.
  virtual std::vector<std::string> execution_keys() const { return {}; }

  // Pretrains an encoder bundle; families without an encoder (pretrains() false) throw UsageError.
  virtual bool pretrains() const { return false; }
  virtual nlohmann::json pretrain(const PretrainContext& request) const;
  // Whether import_checkpoint reads this format.
  virtual bool imports(const std::string& format) const { return false; }
  // Writes a bundle from a foreign checkpoint; returns facts for the manifest. The default
  // throws UsageError ("family X cannot import").
  virtual nlohmann::json import_checkpoint(const ImportContext& request) const;
  // The methods compress() accepts; empty when the family has none.
  virtual std::vector<std::string> compress_methods() const { return {}; }
  // Writes the compressed bundle to request.out_dir; returns facts for compression.json:
  // "settings" (every setting used), "parameters_before" and "parameters_after", and any
  // figures the method drew ("figures": file names inside out_dir). The default throws
  // UsageError ("family X cannot be compressed").
  virtual nlohmann::json compress(const CompressContext& request) const;
  // Whether `compress --method <method>` learns from teachers (--teacher, default the bundle
  // itself): the workflow then loads them (a family cannot load another family's bundle) and
  // fills CompressContext::teacher_probs.
  virtual bool compress_method_takes_teachers(const std::string& method) const { return false; }
  // For such a method, how its settings (key=value overrides) ask the workflow to weight
  // `teachers` teachers; ConfigError naming the key when they are wrong.
  virtual TeacherWeighting teacher_weighting(const std::string& method, const std::vector<std::string>& overrides,
                                             std::size_t teachers) const {
    return {};
  }
  // Why a bundle of this family gives no classes (an imported encoder without a head), said
  // before anything compares its labels with class.txt; empty when it classifies.
  virtual std::string without_classes(const Bundle& bundle) const { return {}; }
  // Checks a bundle of this family (or of one of its kinds, "<name>-<kind>") as fully as
  // loading it would. The default loads it as a classifier.
  virtual void verify(const Bundle& bundle) const;

 protected:
  // The bundle loaded as a classifier; a bad config in its manifest is a ModelFormatError.
  std::unique_ptr<Classifier> load_checked(const Bundle& bundle) const;
};

}  // namespace newscls
