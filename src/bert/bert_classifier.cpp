// The bert family's Classifier: character vocabulary, encoder + [CLS] head, MLM pretraining
// (or an --init encoder bundle), fine-tuning, our own weight payloads, attention dumps.
#include <algorithm>
#include <filesystem>
#include <optional>

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "bert/attention_dump.h"
#include "bert/batching.h"
#include "bert/bert.h"
#include "bert/encoder.h"
#include "bert/settings.h"
#include "bert/tensor_io.h"
#include "bert/training.h"
#include "bert/vocab.h"
#include "newscls/atomic_file.h"
#include "newscls/config.h"
#include "newscls/error.h"
#include "newscls/stopwatch.h"

namespace newscls::bert {
namespace {

namespace fs = std::filesystem;

constexpr const char* kVocabPayload = "vocab.bin";
constexpr const char* kWeightsPayload = "weights.bin";
constexpr const char* kEncoderPayload = "encoder.bin";

Encoded encode_all(const CharVocab& vocab, const std::vector<std::string>& titles, std::int64_t max_len) {
  Encoded out;
  out.reserve(titles.size());
  for (const std::string& t : titles) out.push_back(vocab.encode(t, max_len));
  return out;
}

void check_known_keys(const nlohmann::json& config) { check_config_keys(config, default_options_json(), "bert"); }

void apply_threads(int threads) {
  if (threads > 0) at::set_num_threads(threads);
}


struct EncoderBundle {
  CharVocab vocab;
  Options options;
  std::string weights_path;
};

EncoderBundle open_encoder_bundle(const std::string& dir) {
  Bundle bundle = Bundle::open(dir);
  if (bundle.manifest().family != kEncoderFamily) {
    throw ModelFormatError(dir, "is a '" + bundle.manifest().family + "' bundle, not a " +
                                    kEncoderFamily + " (made by newscls pretrain)");
  }
  return {CharVocab::load(bundle.payload_path(kVocabPayload)),
          parse_options(bundle.manifest().config), bundle.payload_path(kEncoderPayload)};
}

class BertClassifier final : public Classifier {
 public:
  std::string family() const override { return "bert"; }

  void configure(const nlohmann::json& config) override {
    check_known_keys(config);
    config_ = strip_docs(config);
    options_ = parse_options(config_);
  }
  nlohmann::json config() const override { return config_; }

  nlohmann::json train(const TrainContext& ctx) override;
  std::vector<Prediction> predict_batch(const std::vector<std::string>& titles) override;
  std::size_t preferred_batch_size() const override { return 2048; }
  void set_threads(int threads) override { apply_threads(std::min(threads, options_.max_threads)); }
  void save(BundleWriter& bundle) const override;
  void load(const Bundle& bundle) override;
  void dump_attention(const std::vector<std::string>& titles, std::size_t first_index,
                      const std::string& out_dir) override;

 private:
  void build_model(std::int64_t num_classes);
  void require_model() const {
    if (!model_) throw UsageError("bert model is neither trained nor loaded");
  }
  nlohmann::json prepare_encoder(const TrainContext& ctx);

  nlohmann::json config_ = strip_docs(default_options_json());
  Options options_ = parse_options(config_);
  std::optional<CharVocab> vocab_;
  std::shared_ptr<MaskRng> rng_ = std::make_shared<MaskRng>(1);
  ClassifierModel model_{nullptr};
  std::vector<std::string> label_names_;
};

void BertClassifier::build_model(std::int64_t num_classes) {
  options_.arch.vocab_size = vocab_->size();
  model_ = ClassifierModel(options_.arch, num_classes, rng_);
}

// Vocabulary and encoder weights: from --init, from a finished pretraining phase of an
// interrupted run, or by pretraining now (pretrain_epochs > 0), else random.
nlohmann::json BertClassifier::prepare_encoder(const TrainContext& ctx) {
  const auto num_classes = static_cast<std::int64_t>(ctx.labels->size());
  if (!ctx.init_dir.empty()) {
    EncoderBundle enc = open_encoder_bundle(ctx.init_dir);
    options_.arch.layers = enc.options.arch.layers;
    options_.arch.hidden = enc.options.arch.hidden;
    options_.arch.heads = enc.options.arch.heads;
    options_.arch.ff = enc.options.arch.ff;
    options_.arch.max_len = enc.options.arch.max_len;
    options_.arch.bigram_buckets = enc.options.arch.bigram_buckets;
    options_.arch.trigram_buckets = enc.options.arch.trigram_buckets;
    set_architecture(config_, options_.arch);
    vocab_ = std::move(enc.vocab);
    build_model(num_classes);
    load_tensors(enc.weights_path, named_state(*model_->encoder));
    spdlog::info("fine-tuning from encoder bundle {}", ctx.init_dir);
    return {{"init_dir", ctx.init_dir}};
  }
  vocab_ = CharVocab::build(ctx.train->titles, options_.vocab_min_count, options_.vocab_max_size);
  build_model(num_classes);
  if (options_.pretrain_epochs == 0) return nlohmann::json::object();
  const std::string saved = ctx.work_dir.empty() ? "" : ctx.work_dir + "/bert_pretrained.bin";
  const bool have_checkpoint = has_checkpoint(ctx.work_dir);
  if (ctx.resume && (have_checkpoint || (!saved.empty() && fs::exists(saved)))) {
    if (!have_checkpoint) load_tensors(saved, named_state(*model_->encoder));
    spdlog::info("resume: pretraining already done");
    return {{"pretrain_resumed", true}};
  }
  Encoded titles = encode_all(*vocab_, ctx.train->titles, options_.arch.max_len);
  nlohmann::json facts = pretrain_mlm(model_->encoder, rng_, options_, {&titles, vocab_->size(), ctx.seed});
  if (!saved.empty()) save_tensors(saved, named_state(*model_->encoder));
  return facts;
}

nlohmann::json BertClassifier::train(const TrainContext& ctx) {
  if (ctx.train == nullptr || ctx.labels == nullptr) throw UsageError("bert: no training data");
  if (ctx.device != "cpu") throw UsageError("bert: this LibTorch build has no CUDA; use --device cpu");
  const Stopwatch watch;
  apply_threads(std::min(ctx.threads, options_.max_threads));
  spdlog::info("bert: {} LibTorch thread(s) (max_threads {}); OpenBLAS runs its own", at::get_num_threads(),
               options_.max_threads);
  torch::manual_seed(ctx.seed);
  rng_->reseed(ctx.seed);
  label_names_ = ctx.labels->names;
  if (!ctx.work_dir.empty()) make_directories(ctx.work_dir);
  nlohmann::json facts = prepare_encoder(ctx);

  const std::int64_t max_len = options_.arch.max_len;
  Encoded train = encode_all(*vocab_, ctx.train->titles, max_len);
  Encoded dev;
  FineTuneJob job;
  job.train = &train;
  job.train_labels = &ctx.train->labels;
  if (ctx.dev != nullptr) {
    dev = encode_all(*vocab_, ctx.dev->titles, max_len);
    job.dev = &dev;
    job.dev_labels = &ctx.dev->labels;
  }
  job.labels = ctx.labels;
  job.seed = ctx.seed;
  job.checkpoint_dir = ctx.work_dir;
  job.resume = ctx.resume;
  facts.update(fine_tune(model_, rng_, options_, job));
  facts["vocab_size"] = vocab_->size();
  facts["parameters"] = [&] {
    std::int64_t n = 0;
    for (const auto& p : model_->parameters()) n += p.numel();
    return n;
  }();
  facts["threads"] = at::get_num_threads();
  facts["train_seconds"] = watch.seconds();
  return facts;
}

std::vector<Prediction> BertClassifier::predict_batch(const std::vector<std::string>& titles) {
  require_model();
  if (titles.empty()) return {};
  Encoded encoded = encode_all(*vocab_, titles, options_.arch.max_len);
  torch::Tensor probs = predict_probs(model_, encoded, options_.predict_batch_size).contiguous();
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
  vocab_->save(bundle.payload_path(kVocabPayload));
  save_tensors(bundle.payload_path(kWeightsPayload), named_state(*model_));
}

void BertClassifier::load(const Bundle& bundle) {
  label_names_ = bundle.manifest().labels;
  vocab_ = CharVocab::load(bundle.payload_path(kVocabPayload));
  build_model(static_cast<std::int64_t>(label_names_.size()));
  load_tensors(bundle.payload_path(kWeightsPayload), named_state(*model_));
  model_->eval();
}

void BertClassifier::dump_attention(const std::vector<std::string>& titles, std::size_t first_index,
                                    const std::string& out_dir) {
  require_model();
  c10::InferenceMode guard;
  model_->eval();
  for (std::size_t i = 0; i < titles.size(); ++i) {
    const std::vector<std::int64_t> ids = vocab_->encode(titles[i], options_.arch.max_len);
    Batch batch = make_batch({ids}, {0}, nullptr);
    EncoderOutput enc = model_->encoder->forward(batch.ids, batch.key_valid, /*keep_weights=*/true);
    torch::Tensor probs = torch::softmax(model_->head(enc.hidden), 1)[0];
    AttentionDump dump;
    dump.title = titles[i];
    dump.tokens = vocab_->tokens_of(ids);
    dump.label_id = static_cast<int>(probs.argmax().item<std::int64_t>());
    dump.label = dump.label_id < static_cast<int>(label_names_.size()) ? label_names_[dump.label_id]
                                                                        : std::to_string(dump.label_id);
    dump.score = probs[dump.label_id].item<float>();
    dump.weights = torch::stack(enc.weights).squeeze(1);  // (layers, heads, T, T)
    write_attention_dump(dump, out_dir, first_index + i);
  }
}

}  // namespace

std::unique_ptr<Classifier> make_classifier() { return std::make_unique<BertClassifier>(); }

nlohmann::json default_config() { return default_options_json(); }

nlohmann::json pretrain_encoder_bundle(const PretrainRequest& request) {
  if (request.train == nullptr || request.labels == nullptr) throw UsageError("pretrain: no training data");
  check_known_keys(request.config);
  const nlohmann::json config = strip_docs(request.config);
  Options options = parse_options(config);
  if (options.pretrain_epochs == 0) throw ConfigError("pretrain_epochs", "must be > 0 for pretrain");
  const Stopwatch watch;
  apply_threads(std::min(request.threads, options.max_threads));
  torch::manual_seed(request.seed);
  auto rng = std::make_shared<MaskRng>(request.seed);
  CharVocab vocab = CharVocab::build(request.train->titles, options.vocab_min_count, options.vocab_max_size);
  options.arch.vocab_size = vocab.size();
  Encoder encoder(options.arch, rng);
  init_bert_weights(*encoder);
  Encoded titles = encode_all(vocab, request.train->titles, options.arch.max_len);
  nlohmann::json facts = pretrain_mlm(encoder, rng, options, {&titles, vocab.size(), request.seed});
  facts["vocab_size"] = vocab.size();
  facts["threads"] = at::get_num_threads();
  facts["train_seconds"] = watch.seconds();

  BundleWriter writer(request.out_dir);
  vocab.save(writer.payload_path(kVocabPayload));
  save_tensors(writer.payload_path(kEncoderPayload), named_state(*encoder));
  Manifest manifest;
  manifest.family = kEncoderFamily;
  manifest.labels = request.labels->names;
  manifest.config = config;
  manifest.training = facts;
  writer.commit(manifest);
  return facts;
}

}  // namespace newscls::bert
