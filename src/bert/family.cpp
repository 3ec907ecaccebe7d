// The bert family as the registry sees it.
#include "newscls/core/family.h"
#include "bert/bert.h"
#include "bert/bert_training.h"
#include "bert/model/settings.h"

namespace newscls::bert {
namespace {

class BertFamily final : public Family {
 public:
  std::string name() const override { return "bert"; }
  const std::vector<ConfigKey>& config_keys() const override { return settings_table().keys(); }
  std::unique_ptr<Classifier> make_classifier() const override { return bert::make_classifier(); }
  bool has_attention() const override { return true; }
  bool trains_distributed() const override { return true; }
  bool trains_from_init() const override { return true; }
  bool trains_on_device() const override { return true; }
  bool resumes() const override { return true; }
  // After pretraining on the feed, one round raised dev accuracy and reverse validation (BENCHMARKS).
  int default_self_training_rounds() const override { return 1; }
  std::vector<std::string> execution_keys() const override { return bert::execution_keys(); }
  bool pretrains() const override { return true; }
  nlohmann::json pretrain(const PretrainContext& request) const override {
    return training_library().pretrain(request);
  }
  bool imports(const std::string& format) const override { return format == kHuggingFaceFormat; }
  nlohmann::json import_checkpoint(const ImportContext& request) const override {
    if (!imports(request.format)) return Family::import_checkpoint(request);
    return training_library().import_checkpoint(request);
  }
  // Both load the training library: compress_methods() is asked by the commands that compress.
  std::vector<std::string> compress_methods() const override { return training_library().compress_methods(); }
  nlohmann::json compress(const CompressContext& request) const override {
    return training_library().compress(request);
  }
  bool compress_method_takes_teachers(const std::string& method) const override {
    return training_library().compress_method_takes_teachers(method);
  }
  TeacherWeighting teacher_weighting(const std::string& method, const std::vector<std::string>& overrides,
                                     std::size_t teachers) const override {
    return training_library().teacher_weighting(method, overrides, teachers);
  }
  std::string without_classes(const Bundle& bundle) const override {
    if (parse_settings(bundle.manifest().config).classifier) return {};
    const nlohmann::json& facts = bundle.manifest().training;
    const std::string source = facts.is_object() && facts.value("imported_from", nlohmann::json()).is_string()
                                   ? facts["imported_from"].get<std::string>()
                                   : "HF_DIR";
    return "is an encoder without a classifier head (its labels are the checkpoint's placeholders); fine-tune it "
           "first: newscls train --model bert --init hf:" +
           source;
  }
  // An encoder bundle is no classifier: it is loaded as --init loads it.
  void verify(const Bundle& bundle) const override {
    if (bundle.manifest().family == kEncoderFamily) {
      verify_encoder_bundle(bundle.dir());
    } else {
      Family::verify(bundle);
    }
  }
};

}  // namespace

const Family& family() {
  static const BertFamily kFamily;
  return kFamily;
}

}  // namespace newscls::bert
