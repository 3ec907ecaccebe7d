// The entry point of libnewscls_bert_train: what the runtime asks of it (bert_training.h).
#include "bert/bert.h"
#include "bert/bert_training.h"
#include "bert/compress/compress.h"
#include "bert/train/classifier_training.h"

namespace newscls::bert {
namespace {

class Training final : public BertTraining {
 public:
  nlohmann::json train(ClassifierState& state, const TrainContext& ctx) const override {
    return train_classifier(state, ctx);
  }
  nlohmann::json pretrain(const PretrainContext& request) const override { return pretrain_encoder_bundle(request); }
  nlohmann::json import_checkpoint(const ImportContext& request) const override { return import_hf_bundle(request); }
  std::vector<std::string> compress_methods() const override { return compress_method_names(); }
  nlohmann::json compress(const CompressContext& request) const override { return compress_bundle(request); }
  bool compress_method_takes_teachers(const std::string& method) const override {
    const CompressMethod* m = find_compress_method(method);
    return m != nullptr && m->teacher_weighting != nullptr;
  }
  TeacherWeighting teacher_weighting(const std::string& method, const std::vector<std::string>& overrides,
                                     std::size_t teachers) const override {
    if (!compress_method_takes_teachers(method)) return {};
    return find_compress_method(method)->teacher_weighting(overrides, teachers);
  }
};

}  // namespace
}  // namespace newscls::bert

extern "C" __attribute__((visibility("default"))) const newscls::bert::BertTraining* newscls_bert_training() {
  static const newscls::bert::Training kTraining;
  return &kTraining;
}
