// What the bert runtime asks of its training library (libnewscls_bert_train): training a
// classifier, pretraining, importing a checkpoint, compressing. The runtime loads that
// library on the first call of training_library(), so that predict, eval, serve, embed,
// attention and info never load it. A program that links the training library (the unit
// tests) has newscls_bert_training already, and nothing is loaded.
//
//   nlohmann::json facts = training_library().train(state, ctx);
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bert/classifier_state.h"
#include "newscls/core/classifier.h"
#include "newscls/core/family.h"

namespace newscls::bert {

class BertTraining {
 public:
  virtual ~BertTraining() = default;
  // Fine-tunes state's classifier (from --init, a pretraining phase, or random weights).
  virtual nlohmann::json train(ClassifierState& state, const TrainContext& ctx) const = 0;
  virtual nlohmann::json pretrain(const PretrainContext& request) const = 0;
  virtual nlohmann::json import_checkpoint(const ImportContext& request) const = 0;
  virtual std::vector<std::string> compress_methods() const = 0;
  virtual nlohmann::json compress(const CompressContext& request) const = 0;
  // Family::compress_method_takes_teachers and Family::teacher_weighting.
  virtual bool compress_method_takes_teachers(const std::string& method) const = 0;
  virtual TeacherWeighting teacher_weighting(const std::string& method, const std::vector<std::string>& overrides,
                                             std::size_t teachers) const = 0;
};

// The symbol the training library exports: extern "C" const BertTraining* newscls_bert_training().
constexpr const char* kTrainingEntry = "newscls_bert_training";

// The training library's BertTraining, loaded on first use: from where the build put it, else
// from beside the executable (a copied tool). Throws IoError naming the path it tried.
const BertTraining& training_library();

}  // namespace newscls::bert
