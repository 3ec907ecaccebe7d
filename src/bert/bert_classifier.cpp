// The bert family's Classifier at run time: predictions, embeddings, attention dumps, and
// our own weight payloads (float or int8). Training and imports fill its state in the training
// library (bert_training.h), loaded only then.
#include <algorithm>
#include <optional>

#include <torch/torch.h>

#include "bert/bert.h"
#include "bert/bert_training.h"
#include "bert/classifier_state.h"
#include "bert/kernels/blas_threads.h"
#include "bert/model/attention_dump.h"
#include "bert/model/encoder.h"
#include "bert/model/int8_payload.h"
#include "bert/model/settings.h"
#include "bert/model/tensor_io.h"
#include "bert/tokens/batching.h"
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

// Class probabilities (N, classes) in input order. A call that fits one batch (a served
// micro-batch) is split over `threads` threads, each running its own forward passes (the
// model is only read): 32 titles use two cores where one title cannot. Bigger calls run
// their batches in turn, as predict_probs does, and leave the cores to OpenBLAS.
torch::Tensor parallel_probs(ClassifierModel& model, const Encoded& encoded, std::size_t batch_size,
                             std::size_t threads) {
  if (encoded.size() > batch_size) threads = 1;
  const std::vector<std::vector<std::size_t>> groups = predict_groups(encoded, batch_size, threads);
  std::vector<torch::Tensor> probs(groups.size());
  model->eval();  // before the threads start: they only read the model
  parallel_tasks(groups.size(), static_cast<int>(threads), [&](std::size_t g, int) {
    c10::InferenceMode guard;
    Batch batch = make_batch(encoded, groups[g], nullptr);
    probs[g] = torch::softmax(model(batch.ids, batch.key_valid), 1);
  });
  std::vector<std::int64_t> index;
  index.reserve(encoded.size());
  for (const auto& group : groups) index.insert(index.end(), group.begin(), group.end());
  c10::InferenceMode guard;
  torch::Tensor out = torch::empty({static_cast<std::int64_t>(encoded.size()), probs[0].size(1)});
  return out.index_copy_(0, torch::tensor(index, torch::kInt64), torch::cat(probs));
}

// Per-layer (1, heads_l, T, T) weights as (layers, max heads, T, T); a pruned layer's missing
// heads are zeros.
torch::Tensor stack_layer_weights(const std::vector<torch::Tensor>& layers) {
  std::int64_t heads = 0;
  for (const torch::Tensor& w : layers) heads = std::max(heads, w.size(1));
  std::vector<torch::Tensor> padded;
  for (const torch::Tensor& w : layers) {
    padded.push_back(torch::constant_pad_nd(w.squeeze(0), {0, 0, 0, 0, 0, heads - w.size(1)}));
  }
  return torch::stack(padded);
}

class BertClassifier final : public Classifier {
 public:
  explicit BertClassifier(ClassifierState state = {}) : state_(std::move(state)) {}
  std::string family() const override { return "bert"; }

  void configure(const nlohmann::json& config) override {
    check_known_keys(config);
    state_.config = strip_docs(config);
    state_.options = parse_options(state_.config);
  }
  nlohmann::json config() const override { return state_.config; }

  void check_trainable(const std::string& init_dir) const override {
    bert::check_trainable(state_.options, init_dir);
  }
  nlohmann::json train(const TrainContext& ctx) override { return training_library().train(state_, ctx); }
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
    if (!state_.model) throw UsageError("bert model is neither trained nor loaded");
  }

  ClassifierState state_;
  std::string bundle_dir_;           // for the error of an encoder asked to classify
  std::size_t predict_threads_ = 1;  // threads one predict_batch call splits over
  std::optional<Int8Layout> int8_;   // set when loaded from an int8 bundle (model/int8_payload.h)
};

std::vector<Prediction> BertClassifier::predict_batch(const std::vector<std::string>& titles) {
  require_model();
  if (!state_.options.classifier) {
    const std::string source = state_.imported_from.empty() ? "HF_DIR" : state_.imported_from;
    throw ModelFormatError(bundle_dir_.empty() ? source : bundle_dir_,
                           "is an encoder without a classifier head (embed and attention only); fine-tune it: "
                           "newscls train --model bert --init hf:" + source);
  }
  if (titles.empty()) return {};
  Encoded encoded = encode_titles(*state_.vocab, titles, state_.options.arch.max_len);
  torch::Tensor probs =
      parallel_probs(state_.model, encoded, static_cast<std::size_t>(state_.options.predict_batch_size), predict_threads_)
          .contiguous();
  const std::int64_t classes = probs.size(1);
  const float* p = probs.data_ptr<float>();
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

void BertClassifier::save(BundleWriter& bundle) const {
  require_model();
  state_.vocab->save(bundle, state_.options.arch.vocab_size);
  if (int8_) {
    save_int8_weights(bundle.payload_path(kInt8Payload), *state_.model, *int8_);
  } else {
    save_tensors(bundle.payload_path(kWeightsPayload), named_state(*state_.model));
  }
}

void BertClassifier::load(const Bundle& bundle) {
  state_.label_names = bundle.manifest().labels;
  bundle_dir_ = bundle.dir();
  const nlohmann::json& facts = bundle.manifest().training;
  state_.imported_from = facts.is_object() && facts.contains("imported_from") && facts["imported_from"].is_string()
                             ? facts["imported_from"].get<std::string>() : "";
  state_.vocab = TitleTokenizer::load(bundle, state_.options.tokenizer);
  build_model(state_, state_.options.classifier ? static_cast<std::int64_t>(state_.label_names.size()) : 0);
  int8_.reset();
  if (has_int8_weights(bundle)) {
    int8_ = load_int8_weights(bundle.payload_path(kInt8Payload), *state_.model);
  } else {
    load_tensors(bundle.payload_path(kWeightsPayload), named_state(*state_.model));
  }
  state_.model->eval();
}

void BertClassifier::dump_attention(const std::vector<std::string>& titles, std::size_t first_index,
                                    const std::string& out_dir, const ProbsAdjust& adjust) {
  require_model();
  c10::InferenceMode guard;
  state_.model->eval();
  for (std::size_t i = 0; i < titles.size(); ++i) {
    const std::vector<std::int64_t> ids = state_.vocab->encode(titles[i], state_.options.arch.max_len);
    Batch batch = make_batch({ids}, {0}, nullptr);
    EncoderOutput enc = state_.model->encoder->forward(batch.ids, batch.key_valid, /*keep_weights=*/true);
    AttentionDump dump;
    dump.title = titles[i];
    dump.tokens = state_.vocab->tokens_of(ids);
    // An imported encoder has no label to show; a blank title gets none, as predict abstains.
    if (state_.model->has_classifier() && !is_blank_title(titles[i])) {
      const torch::Tensor row = torch::softmax(state_.model->head(enc.hidden), 1)[0].contiguous();
      std::vector<float> probs(row.data_ptr<float>(), row.data_ptr<float>() + row.numel());
      if (adjust) adjust(probs);
      const Prediction shown = prediction_from_probs(std::move(probs));
      dump.label_id = shown.label;
      dump.label = dump.label_id < static_cast<int>(state_.label_names.size()) ? state_.label_names[dump.label_id]
                                                                          : std::to_string(dump.label_id);
      dump.score = shown.score;
    }
    dump.heads_per_layer = state_.options.arch.heads_per_layer;
    dump.weights = stack_layer_weights(enc.weights);  // (layers, heads, T, T)
    write_attention_dump(dump, out_dir, first_index + i);
  }
}

std::vector<Embedding> BertClassifier::embed(const std::vector<std::string>& titles) {
  require_model();
  c10::InferenceMode guard;
  state_.model->eval();
  const Encoded encoded = encode_titles(*state_.vocab, titles, state_.options.arch.max_len);
  std::vector<std::size_t> lengths;
  for (const auto& ids : encoded) lengths.push_back(ids.size());
  std::vector<Embedding> out(titles.size());
  for (const auto& rows : bucket_batches(lengths, state_.options.predict_batch_size, nullptr)) {
    Batch batch = make_batch(encoded, rows, nullptr);
    const torch::Tensor cls = state_.model->encoder(batch.ids, batch.key_valid, false, /*cls_only=*/true)
                                  .hidden.select(1, 0).contiguous();
    const torch::Tensor pooled = state_.model->has_pooler() ? state_.model->pooled(cls).contiguous() : torch::Tensor();
    const std::int64_t h = cls.size(1);
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const float* c = cls.data_ptr<float>() + k * h;
      out[rows[k]].cls.assign(c, c + h);
      if (pooled.defined()) out[rows[k]].pooler.assign(pooled.data_ptr<float>() + k * h, pooled.data_ptr<float>() + (k + 1) * h);
    }
  }
  return out;
}

}  // namespace

void build_model(ClassifierState& state, std::int64_t num_classes) {
  // An imported table may have more rows than vocab.txt has lines.
  state.options.arch.vocab_size = std::max(state.options.arch.vocab_size, state.vocab->size());
  state.vocab->set_fold_punctuation(state.options.fold_punctuation);
  state.model = ClassifierModel(state.options.arch, num_classes, state.rng);
}

std::unique_ptr<Classifier> make_classifier(ClassifierState state) {
  return std::make_unique<BertClassifier>(std::move(state));
}

std::unique_ptr<Classifier> make_classifier() { return std::make_unique<BertClassifier>(); }

nlohmann::json default_config() { return default_options_json(); }

}  // namespace newscls::bert
