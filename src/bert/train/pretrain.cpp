// `newscls pretrain --model bert`: an encoder bundle learnt by masked-language modelling on
// the training titles (and a reader's feed), or an encoder continued on a feed.
#include <optional>

#include <torch/torch.h>

#include "bert/bert.h"
#include "bert/kernels/blas_threads.h"
#include "bert/model/encoder_bundle.h"
#include "bert/model/tensor_io.h"
#include "bert/tokens/batching.h"
#include "bert/tokens/title_tokenizer.h"
#include "bert/train/continued_encoder.h"
#include "bert/train/training.h"
#include "newscls/core/config.h"
#include "newscls/core/error.h"
#include "newscls/core/sha256.h"
#include "newscls/core/stopwatch.h"

namespace newscls::bert {
namespace {

// A new encoder learns from the training titles, then the reader's feed when there is one; a
// trained one continued on a feed reads the feed alone (domain-adaptive pretraining: it knows
// the training titles already, and fine-tuning on them follows).
std::vector<std::string> pretraining_corpus(const PretrainContext& request) {
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

// The keys that shape a trained encoder and the tokens it reads.
nlohmann::json model_keys(const Settings& o) {
  nlohmann::json keys = {
      {"tokenizer", o.tokenizer}, {"fold_punctuation", o.fold_punctuation}, {"classifier", o.classifier}};
  set_architecture(keys, o.arch);
  return keys;
}

// A continued encoder keeps its bundle's architecture and tokenizer (a request for others, adapt
// --set layers=4, is refused naming the key); the pretraining keys (continued_pretrain_epochs,
// pretrain_lr, mask_prob, ...) are the request's, so that `adapt --set` reaches them.
Settings continued_options(Settings requested, const Settings& bundle) {
  const nlohmann::json kept = model_keys(bundle);
  const nlohmann::json changed = nlohmann::json::diff(kept, model_keys(requested));
  if (!changed.empty()) {
    const std::string path = changed[0]["path"].get<std::string>();  // "/layers", "/heads_per_layer/0"
    const std::string key = path.substr(1, path.find('/', 1) - 1);
    throw ConfigError(key, "the continued encoder keeps its bundle's architecture and tokenizer (" + key + " " +
                               kept.value(key, nlohmann::json()).dump() + ")");
  }
  requested.arch = bundle.arch;  // the grown vocabulary's size
  requested.pretrain_epochs = requested.continued_pretrain_epochs;
  return requested;
}

// Ranks started with other settings would pretrain apart in silence (another width aborts in gloo).
SettingsFingerprint pretrain_fingerprint(nlohmann::json config, const PretrainContext& request) {
  for (const std::string& key : execution_keys()) config.erase(key);
  std::string titles;
  for (const std::string& title : request.train->titles) titles += title + "\n";
  return fingerprint_parts({{"config", config}, {"seed", request.seed}, {"data_sha256", sha256_hex(titles)}});
}

}  // namespace

nlohmann::json pretrain_encoder_bundle(const PretrainContext& request) {
  if (request.train == nullptr || request.labels == nullptr) throw UsageError("pretrain: no training data");
  check_known_keys(request.config);
  const nlohmann::json config = strip_docs(request.config);
  Settings options = parse_settings(config);
  if (request.continue_from.empty()) {
    if (options.pretrain_epochs == 0) throw ConfigError("pretrain_epochs", "must be > 0 for pretrain");
    refuse_import_keys(options);
  }
  const Stopwatch watch;
  apply_threads(request.threads, options.max_threads);
  if (intra_op_threads() > 0) at::set_num_threads(intra_op_threads());  // LibTorch's threads too
  torch::manual_seed(request.seed);
  auto rng = std::make_shared<MaskRng>(request.seed);
  const std::vector<std::string> corpus = pretraining_corpus(request);
  std::optional<ContinuedEncoder> continued;
  if (!request.continue_from.empty()) continued = continue_encoder(request.continue_from, corpus, rng);
  TitleTokenizer vocab =
      continued ? continued->vocab
                : TitleTokenizer(CharVocab::build(corpus, options.vocab_min_count, options.vocab_max_size));
  if (continued) options = continued_options(options, continued->options);
  // A pretrained checkpoint's weights (WordPiece: imported) move at its own rate here too, as
  // when they are fine-tuned.
  if (vocab.is_wordpiece()) options.pretrain_lr = options.pretrained_lr;
  options.arch.vocab_size = std::max(continued ? options.arch.vocab_size : 0, vocab.size());
  Encoder encoder = continued ? continued->encoder : Encoder(options.arch, rng);
  if (!continued) init_bert_weights(*encoder);
  Encoded titles = encode_titles(vocab, corpus, options.arch.max_len);
  Collective comm(request.distributed);
  comm.check_same(pretrain_fingerprint(config, request),
                  "the pretraining settings (start every rank with the same command line and data)");
  nlohmann::json facts =
      pretrain_mlm(encoder, rng, options, {&titles, vocab.size(), request.seed, &comm, vocab.mask_ids()});
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
  vocab.save(writer, encoder->arch().vocab_size);
  save_tensors(writer.payload_path(kEncoderPayload), named_state(*encoder));
  Manifest manifest;
  manifest.family = kEncoderFamily;
  manifest.labels = request.labels->names;
  manifest.config = continued ? with_architecture(config, options.arch) : config;
  manifest.training = facts;
  writer.commit(manifest);
  return facts;
}

}  // namespace newscls::bert
