// The bert family's Classifier: character vocabulary, encoder + [CLS] head, MLM pretraining
// (or an --init encoder bundle), fine-tuning, our own weight payloads, attention dumps.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "bert/attention_dump.h"
#include "bert/batching.h"
#include "bert/continued_encoder.h"
#include "bert/bert.h"
#include "bert/encoder.h"
#include "bert/hf_import.h"
#include "bert/quantize.h"
#include "bert/settings.h"
#include "bert/tensor_io.h"
#include "bert/title_tokenizer.h"
#include "bert/training.h"
#include "bert/vocab.h"
#include "newscls/core/atomic_file.h"
#include "newscls/core/config.h"
#include "newscls/core/error.h"
#include "newscls/core/interrupt.h"
#include "newscls/core/parallel.h"
#include "newscls/core/sha256.h"
#include "newscls/core/stopwatch.h"

namespace newscls::bert {
namespace {

namespace fs = std::filesystem;

constexpr const char* kVocabPayload = "vocab.bin";
constexpr const char* kEncoderPayload = "encoder.bin";
constexpr const char* kHfPrefix = "hf:";
// Manifest labels of an imported encoder (a manifest needs two), as transformers names them.
const std::vector<std::string> kPlaceholderLabels = {"LABEL_0", "LABEL_1"};

void check_known_keys(const nlohmann::json& config) { check_config_keys(config, default_options_json(), "bert"); }

// Debian's LibTorch runs its F32 GEMMs on OpenBLAS, whose thread pool at::set_num_threads does
// not reach: without this, `--threads 1` still ran them on every core. Weak: another BLAS has
// no such function, and then the library's own default stands.
extern "C" void openblas_set_num_threads(int threads) __attribute__((weak));

// The user's OPENBLAS_NUM_THREADS, or nullptr when unset or empty (OpenBLAS ignores it then too).
const char* openblas_threads_env() {
  const char* v = std::getenv("OPENBLAS_NUM_THREADS");
  return v != nullptr && *v != '\0' ? v : nullptr;
}

std::string openblas_threads_note(int threads) {
  if (const char* env = openblas_threads_env()) return std::string("OPENBLAS_NUM_THREADS=") + env;
  return threads > 0 ? std::to_string(threads) + " thread(s)" : "on every core";
}

// LibTorch gets at most max_threads (its OpenMP threads and OpenBLAS's oversubscribe the
// cores), OpenBLAS all `threads` unless OPENBLAS_NUM_THREADS says otherwise (0 = leave both
// at their defaults: every core).
void apply_threads(int threads, int max_threads) {
  if (threads <= 0) return;
  at::set_num_threads(std::min(threads, max_threads));
  if (openblas_set_num_threads != nullptr && openblas_threads_env() == nullptr) openblas_set_num_threads(threads);
}

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

// Keys that import-hf and --init hf: set. Given by hand, training ran to the end and wrote a
// bundle that could not load (wordpiece without its vocabulary) or could not classify.
void refuse_import_keys(const Options& o) {
  if (o.tokenizer != "char") {
    throw ConfigError("tokenizer", "wordpiece comes with an imported vocab.txt (import-hf, or train --init hf:DIR); "
                                   "training from the titles builds a char vocabulary");
  }
  if (!o.classifier) {
    throw ConfigError("classifier", "false marks an imported encoder without a head (import-hf); training gives it one");
  }
}

// A resumed run's pretraining facts: those its first process kept beside the encoder (none
// from before they were kept), and the wall time spent up to then.
nlohmann::json resumed_pretrain_facts(const std::string& saved) {
  nlohmann::json facts = {{"pretrain_resumed", true}};
  if (!fs::exists(saved + ".json")) return facts;
  nlohmann::json kept = nlohmann::json::parse(read_file(saved + ".json"), nullptr, /*allow_exceptions=*/false);
  if (!kept.is_object()) throw ModelFormatError(saved + ".json", "not a JSON object; train without --resume to start over");
  facts[kResumedSecondsFact] = kept.value("wall_seconds", 0.0);
  kept.erase("wall_seconds");
  facts.update(kept);
  return facts;
}

// What the config's own architecture rules out, refused before pretraining is spent on it (it
// was found after); with --init the architecture is the encoder's, checked once it is read.
void refuse_architecture_mistakes(const Options& o) {
  if (o.freeze_layers > o.arch.layers) {
    throw ConfigError("freeze_layers", std::to_string(o.freeze_layers) + " exceeds layers (" +
                                           std::to_string(o.arch.layers) + ")");
  }
  if (!o.arch.pooler) throw ConfigError("pooler", "a classifier reads the pooler's output");
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

  void check_trainable(const std::string& init_dir) const override {
    if (init_dir.rfind(kHfPrefix, 0) != 0) refuse_import_keys(options_);
    if (init_dir.empty()) refuse_architecture_mistakes(options_);
  }
  nlohmann::json train(const TrainContext& ctx) override;
  std::vector<Prediction> predict_batch(const std::vector<std::string>& titles) override;
  std::size_t preferred_batch_size() const override { return 2048; }
  void set_threads(int threads) override {
    apply_threads(threads, options_.max_threads);
    predict_threads_ = static_cast<std::size_t>(std::max(threads, 1));
  }
  void save(BundleWriter& bundle) const override;
  void load(const Bundle& bundle) override;
  void dump_attention(const std::vector<std::string>& titles, std::size_t first_index, const std::string& out_dir,
                      const ProbsAdjust& adjust) override;

 private:
  void build_model(std::int64_t num_classes);
  void require_model() const {
    if (!model_) throw UsageError("bert model is neither trained nor loaded");
  }
  nlohmann::json prepare_encoder(const TrainContext& ctx, Collective* comm, const Stopwatch& since_start);

  nlohmann::json config_ = strip_docs(default_options_json());
  Options options_ = parse_options(config_);
  std::optional<TitleTokenizer> vocab_;
  std::shared_ptr<MaskRng> rng_ = std::make_shared<MaskRng>(1);
  ClassifierModel model_{nullptr};
  std::vector<std::string> label_names_;
  std::string bundle_dir_, imported_from_;  // for the error of an encoder asked to classify
  std::size_t predict_threads_ = 1;          // threads one predict_batch call splits over
  std::optional<Int8Layout> int8_;  // set when loaded from an int8 bundle (quantize.h)

 public:
  std::vector<Embedding> embed(const std::vector<std::string>& titles) override;
  // A Hugging Face checkpoint as this classifier (or encoder, without a head); returns facts.
  nlohmann::json import_hf(const std::string& dir);
  const std::vector<std::string>& label_names() const { return label_names_; }

 private:
  nlohmann::json init_from_hf(const std::string& dir, const std::vector<std::string>& given_keys, std::int64_t num_classes);
};

void BertClassifier::build_model(std::int64_t num_classes) {
  // An imported table may have more rows than vocab.txt has lines.
  options_.arch.vocab_size = std::max(options_.arch.vocab_size, vocab_->size());
  vocab_->set_fold_punctuation(options_.fold_punctuation);
  model_ = ClassifierModel(options_.arch, num_classes, rng_);
}

// --init hf:DIR: architecture, WordPiece vocabulary and encoder from the checkpoint, a fresh
// classifier head for the data's labels.
nlohmann::json BertClassifier::init_from_hf(const std::string& dir, const std::vector<std::string>& given_keys,
                                            std::int64_t num_classes) {
  const hf::BertCheckpoint ck = hf::load_bert_checkpoint(dir);
  adopt_checkpoint_architecture(ck, given_keys, config_, options_);
  vocab_ = TitleTokenizer(ck.tokenizer);
  build_model(num_classes);
  copy_checkpoint_weights(ck, *model_, /*fresh_head=*/true);
  spdlog::info("fine-tuning from Hugging Face checkpoint {} ({} layers, hidden {}, {} frozen)", dir,
               options_.arch.layers, options_.arch.hidden, options_.freeze_layers);
  return {{"init_dir", std::string(kHfPrefix) + dir}, {"pretrained_lr", options_.pretrained_lr}};
}

nlohmann::json BertClassifier::import_hf(const std::string& dir) {
  const hf::BertCheckpoint ck = hf::load_bert_checkpoint(dir);
  options_.arch = architecture_of(ck, options_.arch.max_len);
  const bool head = ck.weights.classifier.has_value();
  options_.classifier = head;
  options_.tokenizer = "wordpiece";
  set_architecture(config_, options_.arch);
  config_["tokenizer"] = "wordpiece";
  config_["classifier"] = head;
  label_names_ = head ? ck.config.labels : kPlaceholderLabels;
  if (head && label_names_.size() < 2) {
    throw ModelFormatError(dir + "/config.json", "a classifier needs id2label with at least 2 labels");
  }
  vocab_ = TitleTokenizer(ck.tokenizer);
  build_model(head ? static_cast<std::int64_t>(label_names_.size()) : 0);
  copy_checkpoint_weights(ck, *model_, /*fresh_head=*/false);
  model_->eval();
  imported_from_ = dir;
  return {{"imported_from", dir},
          {"architectures", ck.config.architectures},
          {"classifier_head", head},
          {"unused_tensors", ck.weights.unused.size()}};
}

// Vocabulary and encoder weights: from --init, from a finished pretraining phase of an
// interrupted run, or by pretraining now (pretrain_epochs > 0), else random.
nlohmann::json BertClassifier::prepare_encoder(const TrainContext& ctx, Collective* comm, const Stopwatch& since_start) {
  const auto num_classes = static_cast<std::int64_t>(ctx.labels->size());
  if (ctx.init_dir.rfind(kHfPrefix, 0) == 0) return init_from_hf(ctx.init_dir.substr(3), ctx.given_keys, num_classes);
  if (!ctx.init_dir.empty()) {
    EncoderBundle enc = open_encoder_bundle(ctx.init_dir);
    const nlohmann::json defaults = strip_docs(default_options_json());
    const Architecture& a = enc.options.arch;
    for (const auto& [key, value] : {std::pair<const char*, long long>{"layers", a.layers}, {"hidden", a.hidden},
                                     {"heads", a.heads}, {"ff", a.ff}, {"max_len", a.max_len},
                                     {"bigram_buckets", a.bigram_buckets}, {"trigram_buckets", a.trigram_buckets}}) {
      refuse_if_set(config_, defaults, ctx.given_keys, key, value, ctx.init_dir);
    }
    options_.arch.layers = enc.options.arch.layers;
    options_.arch.hidden = enc.options.arch.hidden;
    options_.arch.heads = enc.options.arch.heads;
    options_.arch.ff = enc.options.arch.ff;
    options_.arch.max_len = enc.options.arch.max_len;
    options_.arch.bigram_buckets = enc.options.arch.bigram_buckets;
    options_.arch.trigram_buckets = enc.options.arch.trigram_buckets;
    set_architecture(config_, options_.arch);
    vocab_ = TitleTokenizer(std::move(enc.vocab));
    build_model(num_classes);
    load_tensors(enc.weights_path, named_state(*model_->encoder));
    spdlog::info("fine-tuning from encoder bundle {}", ctx.init_dir);
    return {{"init_dir", ctx.init_dir}};
  }
  vocab_ = TitleTokenizer(CharVocab::build(ctx.train->titles, options_.vocab_min_count, options_.vocab_max_size));
  build_model(num_classes);
  if (options_.pretrain_epochs == 0) return nlohmann::json::object();
  const std::string saved = ctx.work_dir.empty() ? "" : ctx.work_dir + "/bert_pretrained.bin";
  const bool have_checkpoint = has_checkpoint(ctx.work_dir);
  if (ctx.resume && (have_checkpoint || (!saved.empty() && fs::exists(saved)))) {
    if (!have_checkpoint) load_tensors(saved, named_state(*model_->encoder));
    spdlog::info("resume: pretraining already done");
    return resumed_pretrain_facts(saved);
  }
  // Pretraining keeps no checkpoints of its own: a run stopped inside it starts it again.
  if (ctx.resume) spdlog::warn("resume: the interrupted run had not finished pretraining; pretraining from the start");
  Encoded titles = encode_titles(*vocab_, ctx.train->titles, options_.arch.max_len);
  nlohmann::json facts = pretrain_mlm(model_->encoder, rng_, options_, {&titles, vocab_->size(), ctx.seed, comm});
  if (!saved.empty() && comm->is_root()) {
    nlohmann::json kept = facts;  // for a resumed run's manifest, with the time spent so far
    kept["wall_seconds"] = since_start.seconds();
    write_file_atomic(saved + ".json", kept.dump(2) + "\n");
    // Its existence means "pretraining done" to --resume: never a half-written file.
    save_tensors(saved + ".tmp", named_state(*model_->encoder));
    sync_path(saved + ".tmp");
    fs::rename(saved + ".tmp", saved);
    sync_path(ctx.work_dir);
  }
  return facts;
}

nlohmann::json BertClassifier::train(const TrainContext& ctx) {
  if (ctx.train == nullptr || ctx.labels == nullptr) throw UsageError("bert: no training data");
  if (ctx.device != "cpu") throw UsageError("bert: this LibTorch build has no CUDA; use --device cpu");
  check_trainable(ctx.init_dir);
  const Stopwatch watch;
  apply_threads(ctx.threads, options_.max_threads);
  spdlog::info("bert: {} LibTorch thread(s) (max_threads {}), OpenBLAS {}", at::get_num_threads(),
               options_.max_threads, openblas_threads_note(ctx.threads));
  torch::manual_seed(ctx.seed);
  rng_->reseed(ctx.seed);
  label_names_ = ctx.labels->names;
  // Rank 0 alone writes the work folder; another rank, perhaps on its own machine, only reads it.
  if (!ctx.work_dir.empty() && ctx.distributed.rank == 0) make_directories(ctx.work_dir);
  Collective comm(ctx.distributed);
  comm.check_same(ctx.settings_fingerprint,
                  "the training settings (start every rank with the same command line, data and --init)");
  nlohmann::json facts = prepare_encoder(ctx, &comm, watch);
  Options tuning = options_;
  if (ctx.init_dir.rfind(kHfPrefix, 0) == 0) tuning.lr = options_.pretrained_lr;
  refuse_architecture_mistakes(options_);  // again once --init has brought its own layer count
  if (options_.freeze_layers > 0) model_->encoder->freeze(options_.freeze_layers);

  const std::int64_t max_len = options_.arch.max_len;
  Encoded train = encode_titles(*vocab_, ctx.train->titles, max_len);
  Encoded dev;
  FineTuneJob job;
  job.train = &train;
  job.train_labels = &ctx.train->labels;
  if (ctx.dev != nullptr) {
    dev = encode_titles(*vocab_, ctx.dev->titles, max_len);
    job.dev = &dev;
    job.dev_labels = &ctx.dev->labels;
  }
  job.labels = ctx.labels;
  job.seed = ctx.seed;
  job.checkpoint_dir = ctx.work_dir;
  job.resume = ctx.resume;
  job.comm = &comm;
  job.since_start = &watch;
  job.resumed_seconds = facts.value(kResumedSecondsFact, 0.0);  // a first process's pretraining
  facts.update(fine_tune(model_, rng_, tuning, job));
  facts["vocab_size"] = vocab_->size();
  facts["parameters"] = parameter_count(*model_);
  facts["threads"] = at::get_num_threads();
  facts["train_seconds"] = watch.seconds();
  return facts;
}

std::vector<Prediction> BertClassifier::predict_batch(const std::vector<std::string>& titles) {
  require_model();
  if (!options_.classifier) {
    const std::string source = imported_from_.empty() ? "HF_DIR" : imported_from_;
    throw ModelFormatError(bundle_dir_.empty() ? source : bundle_dir_,
                           "is an encoder without a classifier head (embed and attention only); fine-tune it: "
                           "newscls train --model bert --init hf:" + source);
  }
  if (titles.empty()) return {};
  Encoded encoded = encode_titles(*vocab_, titles, options_.arch.max_len);
  torch::Tensor probs =
      parallel_probs(model_, encoded, static_cast<std::size_t>(options_.predict_batch_size), predict_threads_)
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
  vocab_->save(bundle, options_.arch.vocab_size);
  if (int8_) {
    save_int8_weights(bundle.payload_path(kInt8Payload), *model_, *int8_);
  } else {
    save_tensors(bundle.payload_path(kWeightsPayload), named_state(*model_));
  }
}

void BertClassifier::load(const Bundle& bundle) {
  label_names_ = bundle.manifest().labels;
  bundle_dir_ = bundle.dir();
  const nlohmann::json& facts = bundle.manifest().training;
  imported_from_ = facts.is_object() && facts.contains("imported_from") && facts["imported_from"].is_string()
                       ? facts["imported_from"].get<std::string>() : "";
  vocab_ = TitleTokenizer::load(bundle, options_.tokenizer);
  build_model(options_.classifier ? static_cast<std::int64_t>(label_names_.size()) : 0);
  int8_.reset();
  if (has_int8_weights(bundle)) {
    int8_ = load_int8_weights(bundle.payload_path(kInt8Payload), *model_);
  } else {
    load_tensors(bundle.payload_path(kWeightsPayload), named_state(*model_));
  }
  model_->eval();
}

void BertClassifier::dump_attention(const std::vector<std::string>& titles, std::size_t first_index,
                                    const std::string& out_dir, const ProbsAdjust& adjust) {
  require_model();
  c10::InferenceMode guard;
  model_->eval();
  for (std::size_t i = 0; i < titles.size(); ++i) {
    const std::vector<std::int64_t> ids = vocab_->encode(titles[i], options_.arch.max_len);
    Batch batch = make_batch({ids}, {0}, nullptr);
    EncoderOutput enc = model_->encoder->forward(batch.ids, batch.key_valid, /*keep_weights=*/true);
    AttentionDump dump;
    dump.title = titles[i];
    dump.tokens = vocab_->tokens_of(ids);
    // An imported encoder has no label to show; a blank title gets none, as predict abstains.
    if (model_->has_classifier() && !is_blank_title(titles[i])) {
      const torch::Tensor row = torch::softmax(model_->head(enc.hidden), 1)[0].contiguous();
      std::vector<float> probs(row.data_ptr<float>(), row.data_ptr<float>() + row.numel());
      if (adjust) adjust(probs);
      const Prediction shown = prediction_from_probs(std::move(probs));
      dump.label_id = shown.label;
      dump.label = dump.label_id < static_cast<int>(label_names_.size()) ? label_names_[dump.label_id]
                                                                          : std::to_string(dump.label_id);
      dump.score = shown.score;
    }
    dump.heads_per_layer = options_.arch.heads_per_layer;
    dump.weights = stack_layer_weights(enc.weights);  // (layers, heads, T, T)
    write_attention_dump(dump, out_dir, first_index + i);
  }
}


std::vector<Embedding> BertClassifier::embed(const std::vector<std::string>& titles) {
  require_model();
  c10::InferenceMode guard;
  model_->eval();
  const Encoded encoded = encode_titles(*vocab_, titles, options_.arch.max_len);
  std::vector<std::size_t> lengths;
  for (const auto& ids : encoded) lengths.push_back(ids.size());
  std::vector<Embedding> out(titles.size());
  for (const auto& rows : bucket_batches(lengths, options_.predict_batch_size, nullptr)) {
    Batch batch = make_batch(encoded, rows, nullptr);
    const torch::Tensor cls = model_->encoder(batch.ids, batch.key_valid, false, /*cls_only=*/true)
                                  .hidden.select(1, 0).contiguous();
    const torch::Tensor pooled = model_->has_pooler() ? model_->pooled(cls).contiguous() : torch::Tensor();
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

std::unique_ptr<Classifier> make_classifier() { return std::make_unique<BertClassifier>(); }

nlohmann::json import_hf_bundle(const ImportRequest& request) {
  const Stopwatch watch;
  BertClassifier model;
  BundleWriter::check_target(request.out_dir);
  nlohmann::json facts = model.import_hf(request.model_dir);
  facts["import_seconds"] = watch.seconds();
  check_interrupted();  // Ctrl-C during the import leaves --out as it was
  BundleWriter writer(request.out_dir);
  model.save(writer);
  check_interrupted();
  Manifest manifest;
  manifest.family = model.family();
  manifest.labels = model.label_names();
  manifest.config = model.config();
  manifest.training = facts;
  writer.commit(manifest);
  return facts;
}

nlohmann::json default_config() { return default_options_json(); }

namespace {

// A new encoder learns from the training titles, then the reader's feed when there is one; a
// trained one continued on a feed reads the feed alone (domain-adaptive pretraining: it knows
// the training titles already, and fine-tuning on them follows).
std::vector<std::string> pretraining_corpus(const PretrainRequest& request) {
  if (!request.continue_from.empty() && request.unlabeled != nullptr) return *request.unlabeled;
  std::vector<std::string> corpus = request.train->titles;
  if (request.unlabeled != nullptr) corpus.insert(corpus.end(), request.unlabeled->begin(), request.unlabeled->end());
  return corpus;
}

// The config with the architecture keys of arch (set_architecture on a copy).
nlohmann::json with_architecture(nlohmann::json config, const Architecture& arch) {
  set_architecture(config, arch);
  return config;
}

// Ranks started with other settings would pretrain apart in silence (another width aborts in gloo).
SettingsFingerprint pretrain_fingerprint(nlohmann::json config, const PretrainRequest& request) {
  for (const std::string& key : execution_keys()) config.erase(key);
  std::string titles;
  for (const std::string& title : request.train->titles) titles += title + "\n";
  return fingerprint_parts({{"config", config}, {"seed", request.seed}, {"data_sha256", sha256_hex(titles)}});
}

}  // namespace

nlohmann::json pretrain_encoder_bundle(const PretrainRequest& request) {
  if (request.train == nullptr || request.labels == nullptr) throw UsageError("pretrain: no training data");
  check_known_keys(request.config);
  const nlohmann::json config = strip_docs(request.config);
  Options options = parse_options(config);
  if (options.pretrain_epochs == 0) throw ConfigError("pretrain_epochs", "must be > 0 for pretrain");
  if (request.continue_from.empty()) refuse_import_keys(options);
  const Stopwatch watch;
  apply_threads(request.threads, options.max_threads);
  torch::manual_seed(request.seed);
  auto rng = std::make_shared<MaskRng>(request.seed);
  const std::vector<std::string> corpus = pretraining_corpus(request);
  std::optional<ContinuedEncoder> continued;
  if (!request.continue_from.empty()) continued = continue_encoder(request.continue_from, corpus, rng);
  CharVocab vocab = continued ? continued->vocab : CharVocab::build(corpus, options.vocab_min_count, options.vocab_max_size);
  if (continued) options = continued->options;
  options.arch.vocab_size = std::max(continued ? options.arch.vocab_size : 0, vocab.size());
  Encoder encoder = continued ? continued->encoder : Encoder(options.arch, rng);
  if (!continued) init_bert_weights(*encoder);
  Encoded titles = encode_titles(vocab, corpus, options.arch.max_len);
  Collective comm(request.distributed);
  comm.check_same(pretrain_fingerprint(config, request),
                  "the pretraining settings (start every rank with the same command line and data)");
  nlohmann::json facts = pretrain_mlm(encoder, rng, options, {&titles, vocab.size(), request.seed, &comm});
  facts["vocab_size"] = vocab.size();
  facts["pretrain_titles"] = corpus.size();
  if (request.unlabeled != nullptr) facts["unlabeled_titles"] = request.unlabeled->size();
  if (continued) {
    facts["continued_from"] = request.continue_from;
    facts["vocab_added"] = continued->added_tokens;
  }
  facts["threads"] = at::get_num_threads();
  facts["train_seconds"] = watch.seconds();
  facts["world_size"] = comm.world_size();
  comm.barrier();
  if (!comm.is_root()) return facts;  // rank 0 writes the bundle

  BundleWriter writer(request.out_dir);
  vocab.save(writer.payload_path(kVocabPayload));
  save_tensors(writer.payload_path(kEncoderPayload), named_state(*encoder));
  Manifest manifest;
  manifest.family = kEncoderFamily;
  manifest.labels = request.labels->names;
  manifest.config = continued ? with_architecture(config, options.arch) : config;
  manifest.training = facts;
  writer.commit(manifest);
  return facts;
}

void verify_encoder_bundle(const std::string& dir) {
  EncoderBundle enc = open_encoder_bundle(dir);
  const TitleTokenizer vocab(std::move(enc.vocab));
  Architecture arch = enc.options.arch;
  arch.vocab_size = std::max(arch.vocab_size, vocab.size());  // as build_model sizes it
  ClassifierModel model(arch, /*num_classes=*/0, std::make_shared<MaskRng>(1));
  load_tensors(enc.weights_path, named_state(*model->encoder));
}

}  // namespace newscls::bert
