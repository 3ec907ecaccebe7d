// The bert family's Classifier at run time: predictions, embeddings, attention dumps, and
// our own weight payloads (float or int8). Predict, embed and attention run the inference
// runtime's forward pass (runtime/inference_model.h) on the weights read from the bundle or
// handed over by training. Training and imports fill its state in the training library
// (bert_training.h), loaded only then: this file and the runtime link no LibTorch.
#include <algorithm>
#include <optional>
#include <set>

#include "bert/bert.h"
#include "bert/bert_training.h"
#include "bert/classifier_state.h"
#include "bert/kernels/blas_threads.h"
#include "bert/model/attention_dump.h"
#include "bert/model/settings.h"
#include "bert/runtime/inference_model.h"
#include "bert/model/state_payload.h"
#include "bert/tokens/buckets.h"
#include "bert/tokens/title_tokenizer.h"
#include "newscls/core/config.h"
#include "newscls/core/error.h"
#include "newscls/core/parallel.h"

namespace newscls::bert {
namespace {

// A thread's share of a batch is at least this many titles: a smaller one loses to packing
// the weights in every GEMM what the extra core gains (scripts/bench/bench_bert_forward.sh).
constexpr std::size_t kMinTitlesPerThread = 16;

// Length-sorted groups of at most batch_size titles, the biggest halved until there are
// `threads` of them or halving would go below kMinTitlesPerThread.
std::vector<std::vector<std::size_t>> predict_groups(const Encoded& encoded, std::size_t batch_size,
                                                     std::size_t threads) {
  std::vector<std::size_t> lengths;
  lengths.reserve(encoded.size());
  for (const auto& ids : encoded) lengths.push_back(ids.size());
  std::vector<std::vector<std::size_t>> groups = bucket_batches(lengths, batch_size, nullptr);
  while (groups.size() < threads) {
    auto biggest = std::max_element(groups.begin(), groups.end(),
                                    [](const auto& a, const auto& b) { return a.size() < b.size(); });
    if (biggest->size() < 2 * kMinTitlesPerThread) break;
    const auto half = biggest->begin() + static_cast<std::ptrdiff_t>(biggest->size() / 2);
    std::vector<std::size_t> longer(half, biggest->end());
    biggest->erase(half, biggest->end());
    groups.push_back(std::move(longer));
  }
  return groups;
}

// Class probabilities (N x classes) in input order. A call that fits one batch (a served
// micro-batch) is split over `threads` threads, each running its own forward passes (the
// model is only read): 32 titles use two cores where one title cannot. Bigger calls run
// their batches in turn, as predict_probs does, and leave the cores to OpenBLAS.
runtime::Matrix parallel_probs(const runtime::InferenceModel& model, const Encoded& encoded, std::size_t batch_size,
                               std::size_t threads) {
  if (encoded.size() > batch_size) threads = 1;
  const std::vector<std::vector<std::size_t>> groups = predict_groups(encoded, batch_size, threads);
  std::vector<runtime::Matrix> probs(groups.size());
  parallel_tasks(groups.size(), static_cast<int>(threads),
                 [&](std::size_t g, int) { probs[g] = model.probs(runtime::pad_titles(encoded, groups[g])); });
  runtime::Matrix out(static_cast<std::int64_t>(encoded.size()), probs[0].cols);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (std::size_t k = 0; k < groups[g].size(); ++k) {
      const float* row = probs[g].row(static_cast<std::int64_t>(k));
      std::copy(row, row + out.cols, out.row(static_cast<std::int64_t>(groups[g][k])));
    }
  }
  return out;
}

// The classes of a state's classifier head; 0 without one.
std::int64_t classes_of(const std::vector<NamedArray>& state) {
  for (const NamedArray& a : state) {
    if (a.name == "classifier.weight") return a.shape.at(0);
  }
  return 0;
}

// One title's per-layer weights (heads_l*T x T each) as (layers, max heads, T, T); a pruned
// layer's missing heads are zeros.
std::vector<float> stack_layer_weights(const runtime::EncoderPass& pass, std::int64_t t,
                                       std::vector<std::int64_t>& shape) {
  const std::int64_t layers = static_cast<std::int64_t>(pass.weights.size());
  const std::int64_t heads = *std::max_element(pass.heads.begin(), pass.heads.end());
  shape = {layers, heads, t, t};
  std::vector<float> out(static_cast<std::size_t>(layers * heads * t * t), 0.0f);
  for (std::int64_t l = 0; l < layers; ++l) {
    const std::vector<float>& w = pass.weights[static_cast<std::size_t>(l)].values;
    std::copy(w.begin(), w.end(), out.begin() + l * heads * t * t);
  }
  return out;
}

class BertClassifier final : public Classifier {
 public:
  explicit BertClassifier(ClassifierState state = {}) : state_(std::move(state)) {
    if (!state_.trained.empty()) adopt_trained_model();
  }
  std::string family() const override { return "bert"; }

  void configure(const nlohmann::json& config) override {
    check_known_keys(config);
    state_.config = strip_docs(config);
    state_.options = parse_settings(state_.config);
  }
  nlohmann::json config() const override { return state_.config; }

  void check_trainable(const std::string& init_dir) const override { bert::check_trainable(state_.options, init_dir); }
  nlohmann::json train(const TrainContext& ctx) override {
    nlohmann::json facts = training_library().train(state_, ctx);
    adopt_trained_model();
    return facts;
  }
  std::vector<Prediction> predict_batch(const std::vector<std::string>& titles) override;
  std::size_t preferred_batch_size() const override { return 2048; }
  void set_threads(int threads) override {
    apply_threads(threads, state_.options.max_threads);
    predict_threads_ = static_cast<std::size_t>(std::max(threads, 1));
  }
  void save(BundleWriter& bundle) const override;
  void load(const Bundle& bundle) override;
  void dump_attention(const std::vector<std::string>& titles, std::size_t first_index, const std::string& out_dir,
                      const ProbsAdjust& adjust) override;
  std::vector<Embedding> embed(const std::vector<std::string>& titles) override;

 private:
  void require_model() const {
    if (!runtime_) throw UsageError("bert model is neither trained nor loaded");
  }
  // Takes the tensors the training library left in state_.trained.
  void adopt_trained_model();
  void build_runtime();

  ClassifierState state_;
  // The weights as read from the bundle or taken from training (engine set: an int8 bundle's,
  // saved as int8), and the forward pass that predicts, embeds and dumps attention from them.
  std::shared_ptr<const Int8State> weights_;
  std::shared_ptr<const runtime::InferenceModel> runtime_;
  // Set when loaded from an int8 bundle: its engine and the tensors it held as int8 rows. A
  // model trained after such a load (adapt on an int8 bundle) saves re-quantised to them.
  std::string int8_engine_;
  std::set<std::string> int8_names_;
  std::string bundle_dir_;           // for the error of an encoder asked to classify
  std::size_t predict_threads_ = 1;  // threads one predict_batch call splits over
};

std::vector<Prediction> BertClassifier::predict_batch(const std::vector<std::string>& titles) {
  require_model();
  if (!state_.options.classifier) {
    const std::string source = state_.imported_from.empty() ? "HF_DIR" : state_.imported_from;
    throw ModelFormatError(bundle_dir_.empty() ? source : bundle_dir_,
                           "is an encoder without a classifier head (embed and attention only); fine-tune it: "
                           "newscls train --model bert --init hf:" +
                               source);
  }
  if (titles.empty()) return {};
  Encoded encoded = encode_titles(*state_.vocab, titles, state_.options.arch.max_len);
  const runtime::Matrix probs =
      parallel_probs(*runtime_, encoded, static_cast<std::size_t>(state_.options.predict_batch_size), predict_threads_);
  const std::int64_t classes = probs.cols;
  const float* p = probs.values.data();
  std::vector<Prediction> out(titles.size());
  for (std::size_t i = 0; i < titles.size(); ++i) {
    const float* row = p + i * classes;
    out[i].probs.assign(row, row + classes);
    const auto best = std::max_element(row, row + classes) - row;
    out[i].label = static_cast<int>(best);
    out[i].score = row[best];
  }
  return out;
}

void BertClassifier::adopt_trained_model() {
  weights_ = std::make_shared<const Int8State>(Int8State{"", std::move(state_.trained)});
  state_.trained.clear();
  build_runtime();
}

void BertClassifier::build_runtime() {
  // The runtime reads the tensors where weights_ holds them (an aliasing pointer keeps them).
  runtime_ = std::make_shared<const runtime::InferenceModel>(
      state_.options.arch, classes_of(weights_->tensors),
      std::shared_ptr<const std::vector<NamedArray>>(weights_, &weights_->tensors));
}

void BertClassifier::save(BundleWriter& bundle) const {
  require_model();
  state_.vocab->save(bundle, state_.options.arch.vocab_size);
  if (!weights_->engine.empty()) {
    write_int8_state(bundle.payload_path(kInt8Payload), *weights_);
  } else if (!int8_engine_.empty()) {
    Int8State requantised{int8_engine_, weights_->tensors};
    for (NamedArray& a : requantised.tensors) {
      if (int8_names_.count(a.name) > 0) quantize_array_rows(a);
    }
    write_int8_state(bundle.payload_path(kInt8Payload), requantised);
  } else {
    write_float_state(bundle.payload_path(kWeightsPayload), weights_->tensors);
  }
}

void BertClassifier::load(const Bundle& bundle) {
  state_.label_names = bundle.manifest().labels;
  bundle_dir_ = bundle.dir();
  const nlohmann::json& facts = bundle.manifest().training;
  state_.imported_from = facts.is_object() && facts.contains("imported_from") && facts["imported_from"].is_string()
                             ? facts["imported_from"].get<std::string>()
                             : "";
  state_.vocab = TitleTokenizer::load(bundle, state_.options.tokenizer);
  // As build_model: an imported table may have more rows than vocab.txt has lines.
  state_.options.arch.vocab_size = std::max(state_.options.arch.vocab_size, state_.vocab->size());
  state_.vocab->set_fold_punctuation(state_.options.fold_punctuation);
  state_.trained.clear();
  const std::int64_t classes = state_.options.classifier ? static_cast<std::int64_t>(state_.label_names.size()) : 0;
  const std::vector<TensorSpec> specs = expected_state(state_.options.arch, classes);
  int8_engine_.clear();
  int8_names_.clear();
  if (has_int8_weights(bundle)) {
    Int8State read = read_int8_state(bundle.payload_path(kInt8Payload), specs);
    if (read.engine != "onednn" && read.engine != "qnnpack") {
      throw ModelFormatError(
          bundle.payload_path(kInt8Payload),
          "needs the quantized engine it was made for: engine is '" + read.engine + "'; use onednn or qnnpack");
    }
    int8_engine_ = read.engine;
    for (const NamedArray& a : read.tensors) {
      if (!a.int8.empty()) int8_names_.insert(a.name);
    }
    weights_ = std::make_shared<const Int8State>(std::move(read));
  } else {
    weights_ =
        std::make_shared<const Int8State>(Int8State{"", read_float_state(bundle.payload_path(kWeightsPayload), specs)});
  }
  build_runtime();
}

void BertClassifier::dump_attention(const std::vector<std::string>& titles, std::size_t first_index,
                                    const std::string& out_dir, const ProbsAdjust& adjust) {
  require_model();
  for (std::size_t i = 0; i < titles.size(); ++i) {
    const std::vector<std::int64_t> ids = state_.vocab->encode(titles[i], state_.options.arch.max_len);
    const runtime::PaddedBatch batch = runtime::pad_titles({ids}, {0});
    const runtime::EncoderPass enc = runtime_->encode(batch, /*keep_weights=*/true, /*cls_only=*/false);
    AttentionDump dump;
    dump.title = titles[i];
    dump.tokens = state_.vocab->tokens_of(ids);
    // An imported encoder has no label to show; a blank title gets none, as predict abstains.
    if (runtime_->has_classifier() && !is_blank_title(titles[i])) {
      std::vector<float> probs = runtime_->head_probs(runtime_->cls(enc, batch)).values;
      if (adjust) adjust(probs);
      const Prediction shown = prediction_from_probs(std::move(probs));
      dump.label_id = shown.label;
      dump.label = dump.label_id < static_cast<int>(state_.label_names.size()) ? state_.label_names[dump.label_id]
                                                                               : std::to_string(dump.label_id);
      dump.score = shown.score;
    }
    dump.heads_per_layer = state_.options.arch.heads_per_layer;
    dump.weights = stack_layer_weights(enc, batch.length, dump.shape);  // (layers, heads, T, T)
    write_attention_dump(dump, out_dir, first_index + i);
  }
}

std::vector<Embedding> BertClassifier::embed(const std::vector<std::string>& titles) {
  require_model();
  const Encoded encoded = encode_titles(*state_.vocab, titles, state_.options.arch.max_len);
  std::vector<std::size_t> lengths;
  for (const auto& ids : encoded) lengths.push_back(ids.size());
  std::vector<Embedding> out(titles.size());
  for (const auto& rows : bucket_batches(lengths, state_.options.predict_batch_size, nullptr)) {
    const runtime::PaddedBatch batch = runtime::pad_titles(encoded, rows);
    const runtime::Matrix cls = runtime_->cls(runtime_->encode(batch, false, /*cls_only=*/true), batch);
    const runtime::Matrix pooled = runtime_->has_pooler() ? runtime_->pooled(cls) : runtime::Matrix();
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const auto r = static_cast<std::int64_t>(k);
      out[rows[k]].cls.assign(cls.row(r), cls.row(r) + cls.cols);
      if (pooled.rows > 0) out[rows[k]].pooler.assign(pooled.row(r), pooled.row(r) + pooled.cols);
    }
  }
  return out;
}

}  // namespace

std::unique_ptr<Classifier> make_classifier(ClassifierState state) {
  return std::make_unique<BertClassifier>(std::move(state));
}

std::unique_ptr<Classifier> make_classifier() { return std::make_unique<BertClassifier>(); }

nlohmann::json default_config() { return settings_table().documented(); }

}  // namespace newscls::bert
