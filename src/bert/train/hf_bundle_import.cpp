// `newscls import-hf`: a Hugging Face BERT checkpoint written as a bert bundle.
#include <memory>

#include "bert/bert.h"
#include "bert/classifier_state.h"
#include "bert/train/hf_import.h"
#include "bert/train/trained_model.h"
#include "newscls/core/error.h"
#include "newscls/core/interrupt.h"
#include "newscls/core/stopwatch.h"

namespace newscls::bert {
namespace {

// Manifest labels of an imported encoder (a manifest needs two), as transformers names them.
const std::vector<std::string> kPlaceholderLabels = {"LABEL_0", "LABEL_1"};

// A Hugging Face checkpoint as a classifier (or an encoder, without a head); returns facts.
nlohmann::json import_hf(ClassifierState& s, const std::string& dir) {
  const hf::BertCheckpoint ck = hf::load_bert_checkpoint(dir);
  s.options.arch = architecture_of(ck, s.options.arch.max_len);
  const bool head = ck.weights.classifier.has_value();
  s.options.classifier = head;
  s.options.tokenizer = "wordpiece";
  set_architecture(s.config, s.options.arch);
  s.config["tokenizer"] = "wordpiece";
  s.config["classifier"] = head;
  s.label_names = head ? ck.config.labels : kPlaceholderLabels;
  if (head && s.label_names.size() < 2) {
    throw ModelFormatError(dir + "/config.json", "a classifier needs id2label with at least 2 labels");
  }
  s.vocab = TitleTokenizer(ck.tokenizer);
  TrainedModel m;
  build_model(s, m, head ? static_cast<std::int64_t>(s.label_names.size()) : 0);
  copy_checkpoint_weights(ck, *m.model, /*fresh_head=*/false);
  s.trained = tensors_of(*m.model);
  s.imported_from = dir;
  return {{"imported_from", dir},
          {"architectures", ck.config.architectures},
          {"classifier_head", head},
          {"unused_tensors", ck.weights.unused.size()}};
}

}  // namespace

nlohmann::json import_hf_bundle(const ImportContext& request) {
  const Stopwatch watch;
  ClassifierState state;
  BundleWriter::check_target(request.out_dir);
  nlohmann::json facts = import_hf(state, request.model_dir);
  const std::vector<std::string> labels = state.label_names;
  const std::unique_ptr<Classifier> model = make_classifier(std::move(state));
  facts["import_seconds"] = watch.seconds();
  check_interrupted();  // Ctrl-C during the import leaves --out as it was
  BundleWriter writer(request.out_dir);
  model->save(writer);
  check_interrupted();
  Manifest manifest;
  manifest.family = model->family();
  manifest.labels = labels;
  manifest.config = model->config();
  manifest.training = facts;
  writer.commit(manifest);
  return facts;
}

}  // namespace newscls::bert
