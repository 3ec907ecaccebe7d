#include "bert/train/classifier_training.h"

#include <filesystem>

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "bert/kernels/blas_threads.h"
#include "bert/model/encoder_bundle.h"
#include "bert/model/tensor_io.h"
#include "bert/tokens/batching.h"
#include "bert/train/hf_import.h"
#include "bert/train/trained_model.h"
#include "bert/train/training.h"
#include "newscls/core/atomic_file.h"
#include "newscls/core/config.h"
#include "newscls/core/error.h"
#include "newscls/core/stopwatch.h"

namespace newscls::bert {
namespace {

namespace fs = std::filesystem;

// A resumed run's pretraining facts: those its first process kept beside the encoder (none
// from before they were kept), and the wall time spent up to then.
nlohmann::json resumed_pretrain_facts(const std::string& saved) {
  nlohmann::json facts = {{"pretrain_resumed", true}};
  if (!fs::exists(saved + ".json")) return facts;
  nlohmann::json kept = nlohmann::json::parse(read_file(saved + ".json"), nullptr, /*allow_exceptions=*/false);
  if (!kept.is_object())
    throw ModelFormatError(saved + ".json", "not a JSON object; train without --resume to start over");
  facts[kResumedSecondsFact] = kept.value("wall_seconds", 0.0);
  kept.erase("wall_seconds");
  facts.update(kept);
  return facts;
}

// --init hf:DIR: architecture, WordPiece vocabulary and encoder from the checkpoint, a fresh
// classifier head for the data's labels.
nlohmann::json init_from_hf(ClassifierState& s, TrainedModel& m, const std::string& dir,
                            const std::vector<std::string>& given_keys, std::int64_t num_classes) {
  const hf::BertCheckpoint ck = hf::load_bert_checkpoint(dir);
  adopt_checkpoint_architecture(ck, given_keys, s.config, s.options);
  s.vocab = TitleTokenizer(ck.tokenizer);
  build_model(s, m, num_classes);
  copy_checkpoint_weights(ck, *m.model, /*fresh_head=*/true);
  spdlog::info("fine-tuning from Hugging Face checkpoint {} ({} layers, hidden {}, {} frozen)", dir,
               s.options.arch.layers, s.options.arch.hidden, s.options.freeze_layers);
  return {{"init_dir", std::string(kHfInitPrefix) + dir}, {"pretrained_lr", s.options.pretrained_lr}};
}

// Vocabulary and encoder weights: from --init, from a finished pretraining phase of an
// interrupted run, or by pretraining now (pretrain_epochs > 0), else random.
// An encoder bundle's architecture: all of it when it was continued from an imported checkpoint
// (a WordPiece vocabulary, positions, norms of its own), else the keys pretraining sets.
void adopt_encoder_architecture(ClassifierState& s, const Settings& encoder) {
  if (encoder.tokenizer != "char") {
    s.options.arch = encoder.arch;
    s.options.tokenizer = encoder.tokenizer;
    s.config["tokenizer"] = encoder.tokenizer;
  } else {
    s.options.arch.layers = encoder.arch.layers;
    s.options.arch.hidden = encoder.arch.hidden;
    s.options.arch.heads = encoder.arch.heads;
    s.options.arch.ff = encoder.arch.ff;
    s.options.arch.max_len = encoder.arch.max_len;
    s.options.arch.bigram_buckets = encoder.arch.bigram_buckets;
    s.options.arch.trigram_buckets = encoder.arch.trigram_buckets;
  }
  set_architecture(s.config, s.options.arch);
}

nlohmann::json prepare_encoder(ClassifierState& s, TrainedModel& m, const TrainContext& ctx, Collective* comm,
                               const Stopwatch& since_start) {
  const auto num_classes = static_cast<std::int64_t>(ctx.labels->size());
  if (ctx.init_dir.rfind(kHfInitPrefix, 0) == 0)
    return init_from_hf(s, m, ctx.init_dir.substr(3), ctx.given_keys, num_classes);
  if (!ctx.init_dir.empty()) {
    EncoderBundle enc = open_encoder_bundle(ctx.init_dir);
    const nlohmann::json defaults = settings_table().defaults();
    const Architecture& a = enc.options.arch;
    for (const auto& [key, value] : {std::pair<const char*, long long>{"layers", a.layers},
                                     {"hidden", a.hidden},
                                     {"heads", a.heads},
                                     {"ff", a.ff},
                                     {"max_len", a.max_len},
                                     {"bigram_buckets", a.bigram_buckets},
                                     {"trigram_buckets", a.trigram_buckets}}) {
      refuse_if_set(s.config, defaults, ctx.given_keys, key, value, ctx.init_dir);
    }
    refuse_if_set(s.config, defaults, ctx.given_keys, "tokenizer", enc.options.tokenizer, ctx.init_dir);
    adopt_encoder_architecture(s, enc.options);
    s.vocab = std::move(enc.vocab);
    build_model(s, m, num_classes);
    load_tensors(enc.weights_path, named_state(*m.model->encoder));
    spdlog::info("fine-tuning from encoder bundle {}", ctx.init_dir);
    return {{"init_dir", ctx.init_dir}};
  }
  s.vocab = TitleTokenizer(CharVocab::build(ctx.train->titles, s.options.vocab_min_count, s.options.vocab_max_size));
  build_model(s, m, num_classes);
  if (s.options.pretrain_epochs == 0) return nlohmann::json::object();
  const std::string saved = ctx.work_dir.empty() ? "" : ctx.work_dir + "/bert_pretrained.bin";
  const bool have_checkpoint = has_checkpoint(ctx.work_dir);
  if (ctx.resume && (have_checkpoint || (!saved.empty() && fs::exists(saved)))) {
    if (!have_checkpoint) load_tensors(saved, named_state(*m.model->encoder));
    spdlog::info("resume: pretraining already done");
    return resumed_pretrain_facts(saved);
  }
  // Pretraining keeps no checkpoints of its own: a run stopped inside it starts it again.
  if (ctx.resume) spdlog::warn("resume: the interrupted run had not finished pretraining; pretraining from the start");
  Encoded titles = encode_titles(*s.vocab, ctx.train->titles, s.options.arch.max_len);
  nlohmann::json facts =
      pretrain_mlm(m.model->encoder, m.rng, s.options, {&titles, s.vocab->size(), ctx.seed, comm, s.vocab->mask_ids()});
  if (!saved.empty() && comm->is_root()) {
    nlohmann::json kept = facts;  // for a resumed run's manifest, with the time spent so far
    kept["wall_seconds"] = since_start.seconds();
    write_json_atomic(saved + ".json", kept);
    // Its existence means "pretraining done" to --resume: never a half-written file.
    save_tensors(saved + ".tmp", named_state(*m.model->encoder));
    sync_path(saved + ".tmp");
    fs::rename(saved + ".tmp", saved);
    sync_path(ctx.work_dir);
  }
  return facts;
}

}  // namespace

nlohmann::json train_classifier(ClassifierState& s, const TrainContext& ctx) {
  if (ctx.train == nullptr || ctx.labels == nullptr) throw UsageError("bert: no training data");
  if (ctx.device != "cpu") throw UsageError("bert: this LibTorch build has no CUDA; use --device cpu");
  check_trainable(s.options, ctx.init_dir);
  const Stopwatch watch;
  apply_threads(ctx.threads, s.options.max_threads);
  if (intra_op_threads() > 0) at::set_num_threads(intra_op_threads());  // LibTorch's threads too
  spdlog::info("bert: {} LibTorch thread(s) (max_threads {}), OpenBLAS {}", at::get_num_threads(),
               s.options.max_threads, openblas_threads_note(ctx.threads));
  torch::manual_seed(ctx.seed);
  TrainedModel m;
  m.rng->reseed(ctx.seed);
  s.label_names = ctx.labels->names;
  // Rank 0 alone writes the work folder; another rank, perhaps on its own machine, only reads it.
  if (!ctx.work_dir.empty() && ctx.distributed.rank == 0) make_directories(ctx.work_dir);
  Collective comm(ctx.distributed);
  comm.check_same(ctx.settings_fingerprint,
                  "the training settings (start every rank with the same command line, data and --init)");
  nlohmann::json facts = prepare_encoder(s, m, ctx, &comm, watch);
  Settings tuning = s.options;
  // A pretrained checkpoint's weights (imported, or continued from one) move at its own rate.
  if (ctx.init_dir.rfind(kHfInitPrefix, 0) == 0 || s.vocab->is_wordpiece()) tuning.lr = s.options.pretrained_lr;
  refuse_architecture_mistakes(s.options);  // again once --init has brought its own layer count
  if (s.options.freeze_layers > 0) m.model->encoder->freeze(s.options.freeze_layers);

  const std::int64_t max_len = s.options.arch.max_len;
  Encoded train = encode_titles(*s.vocab, ctx.train->titles, max_len);
  Encoded dev;
  FineTuneJob job;
  job.train = &train;
  job.train_labels = &ctx.train->labels;
  if (ctx.dev != nullptr) {
    dev = encode_titles(*s.vocab, ctx.dev->titles, max_len);
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
  facts.update(fine_tune(m.model, m.rng, tuning, job));
  facts["vocab_size"] = s.vocab->size();
  facts["parameters"] = parameter_count(*m.model);
  s.trained = tensors_of(*m.model);
  facts["threads"] = at::get_num_threads();
  facts["train_seconds"] = watch.seconds();
  return facts;
}

}  // namespace newscls::bert
