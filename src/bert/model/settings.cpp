#include "bert/model/settings.h"

#include "newscls/core/config.h"
#include "newscls/core/error.h"

namespace newscls::bert {
namespace {

// Also what bundles written before the key continue with.
constexpr int kContinuedPretrainEpochs = 10;

}  // namespace

nlohmann::json default_options_json() {
  nlohmann::json c;
  c["layers"] = 2;
  c["hidden"] = 256;
  c["heads"] = 4;
  c["ff"] = 512;
  c["max_len"] = 64;
  c["dropout"] = 0.1;
  c["attention_dropout"] = 0.1;
  c["bigram_buckets"] = 32768;
  c["trigram_buckets"] = 0;
  c["positions"] = 0;
  c["type_vocab_size"] = 0;
  c["layer_norm_eps"] = 1e-12;
  c["pooler"] = true;
  c["heads_per_layer"] = nlohmann::json::array();
  c["tokenizer"] = "char";
  c["fold_punctuation"] = false;
  c["classifier"] = true;
  c["freeze_layers"] = 0;
  c["pretrained_lr"] = 2e-5;
  c["vocab_min_count"] = 2;
  c["vocab_max_size"] = 8000;
  c["batch_size"] = 64;
  c["predict_batch_size"] = 256;
  c["epochs"] = 2;
  c["pretrain_epochs"] = 2;
  c["continued_pretrain_epochs"] = kContinuedPretrainEpochs;
  c["lr"] = 5e-4;
  c["pretrain_lr"] = 5e-4;
  c["warmup"] = 0.06;
  c["weight_decay"] = 0.01;
  c["clip_norm"] = 1.0;
  c["mask_prob"] = 0.15;
  c["join_prob"] = 0.25;
  c["max_steps"] = 0;
  c["pretrain_max_steps"] = 0;
  c["patience"] = 2;
  c["max_threads"] = 1;
  c["_doc"] = {
      {"layers", "encoder layers (post-LN, as in BERT)"},
      {"hidden", "model width; a multiple of heads"},
      {"heads", "attention heads per layer; each has hidden/heads dimensions"},
      {"ff", "width of the GELU feed-forward block"},
      {"max_len", "tokens per title including [CLS] and [SEP]; longer titles are cut"},
      {"dropout", "dropout on embeddings, sublayer outputs and the classifier input"},
      {"attention_dropout", "dropout on the attention weights (dumps show undropped weights)"},
      {"bigram_buckets", "hashed character-bigram embedding rows added to each token's input; 0 = none"},
      {"trigram_buckets", "hashed character-trigram embedding rows added to each token's input; 0 = none (32768 rows measured worse than none on dev: macro-F1 0.9044 vs 0.9072, without pretraining)"},
      {"positions", "rows of the position table; 0 = max_len (an imported checkpoint keeps its own)"},
      {"type_vocab_size", "token-type (segment) table rows; 0 = none; imported BERT: 2, titles use type 0"},
      {"layer_norm_eps", "epsilon of every LayerNorm (an imported checkpoint's layer_norm_eps)"},
      {"pooler", "tanh pooler over [CLS] (feeds the classifier); false only for an imported encoder without one"},
      {"fold_punctuation", "char tokenizer: every punctuation mark except the ASCII ones inside numbers and names reads as a space, as THUCNews separates clauses with spaces where other outlets write \"，\" \"？\" \"！\" (which THUCNews keeps mostly in sports titles); the vocabulary still lists the marks, so an encoder pretrained without folding fits; off: with join_prob 0.25 it adds nothing on dev or on joined dev titles (dev macro-F1 0.9096 against 0.9106; joined 0.970 against 0.974)"},
      {"heads_per_layer", "heads of each layer after `compress --method prune` (each hidden/heads wide); [] = heads in every layer"},
      {"tokenizer", "char: own character vocabulary built from train; wordpiece: an imported vocab.txt (set by import-hf / --init hf:)"},
      {"classifier", "false only for an imported encoder without a classifier head: embed and attention work, predict and eval need train --init hf:DIR first"},
      {"freeze_layers", "fine-tuning keeps the embeddings and the first N encoder layers fixed; 0 = train all"},
      {"pretrained_lr", "peak learning rate when fine-tuning from a Hugging Face checkpoint (--init hf:DIR) instead of lr; BERT's usual 2e-5"},
      {"vocab_min_count", "a character needs this many occurrences in train to get an id"},
      {"vocab_max_size", "vocabulary cap including the 5 special tokens"},
      {"batch_size", "training titles per optimiser step; batches are bucketed by length"},
      {"predict_batch_size", "titles per forward pass at prediction time"},
      {"epochs", "fine-tuning epochs (early stopping may end sooner); the learning rate decays to 0 over them: 2 reached dev macro-F1 0.9150 after pretraining, 5 overfit (best epoch kept, 0.9049)"},
      {"pretrain_epochs", "MLM epochs run by train when no --init is given; 0 skips pretraining"},
      {"continued_pretrain_epochs",
       "MLM epochs over the feed when adapt continues this bundle's encoder (domain-adaptive pretraining); 10 beat "
       "2 on reverse validation at the same dev accuracy and keeps adapt within 30 minutes on 2 cores "
       "(docs/BENCHMARKS.md)"},
      {"lr", "peak AdamW learning rate for fine-tuning"},
      {"pretrain_lr", "peak AdamW learning rate for MLM pretraining"},
      {"warmup", "fraction of steps with linear warm-up; linear decay to 0 after it"},
      {"weight_decay", "AdamW decoupled weight decay (not on biases, norms)"},
      {"clip_norm", "gradient norm clip; 0 disables"},
      {"join_prob", "fine-tuning: share of training titles joined to another title of the same class ([CLS] a [SEP] b [SEP], cut at max_len), so that length stops telling the class: THUCNews sports titles are the longest (mean 24 characters, others 17-21) and the encoder without it sent titles longer than its training titles to sports (79% of random 40-character strings, 44% of other outlets' headlines); 0 = off (bundles written before it): on dev 0.25 costs 0.37-0.63 points of macro-F1 over three runs (0.10: 0.59) and lifts two joined dev titles of one class from 0.72-0.74 to 0.97 (docs/BENCHMARKS.md)"},
      {"mask_prob", "MLM: share of tokens chosen (80% [MASK], 10% random, 10% kept)"},
      {"max_steps", "cap on fine-tuning optimiser steps, for smoke tests; 0 = no cap"},
      {"pretrain_max_steps", "cap on MLM optimiser steps; 0 = no cap"},
      {"patience", "epochs without a better dev macro-F1 before stopping"},
      {"max_threads", "LibTorch intra-op threads at most (--threads is capped by it); OpenBLAS keeps its own threads: on 2 idle cores 1 LibTorch thread with 2 OpenBLAS threads trained fastest (193 titles/s vs 95 with 2 LibTorch threads)"}};
  return c;
}

namespace {

// Absent or [] (bundles written before pruning existed): every layer has `heads`.
std::vector<std::int64_t> parse_heads_per_layer(const nlohmann::json& c, const Architecture& arch) {
  std::vector<std::int64_t> out;
  if (!c.contains("heads_per_layer")) return out;
  const nlohmann::json& v = c["heads_per_layer"];
  if (!v.is_array()) throw ConfigError("heads_per_layer", "expected an array of head counts");
  if (v.empty()) return out;
  if (static_cast<std::int64_t>(v.size()) != arch.layers) {
    throw ConfigError("heads_per_layer", "needs one head count per layer (" + std::to_string(arch.layers) + ")");
  }
  for (const nlohmann::json& n : v) {
    if (!n.is_number_integer() || n.get<std::int64_t>() < 1 || n.get<std::int64_t>() > arch.heads) {
      throw ConfigError("heads_per_layer", "each count must be an integer from 1 to heads (" +
                                               std::to_string(arch.heads) + "), got " + n.dump());
    }
    out.push_back(n.get<std::int64_t>());
  }
  return out;
}

}  // namespace

std::vector<std::string> execution_keys() { return {"max_threads", "predict_batch_size"}; }

Options parse_options(const nlohmann::json& c) {
  Options o;
  o.arch.layers = config_int(c, "layers", 1, 48);
  o.arch.hidden = config_int(c, "hidden", 8, 4096);
  o.arch.heads = config_int(c, "heads", 1, 64);
  o.arch.ff = config_int(c, "ff", 8, 16384);
  o.arch.max_len = config_int(c, "max_len", 3, 512);
  o.arch.dropout = config_double(c, "dropout", 0.0, 0.9);
  o.arch.attention_dropout = config_double(c, "attention_dropout", 0.0, 0.9);
  // Bundles written before these keys existed have no n-gram embeddings.
  for (auto [key, field] : {std::pair{"bigram_buckets", &o.arch.bigram_buckets},
                            std::pair{"trigram_buckets", &o.arch.trigram_buckets}}) {
    *field = c.contains(key) ? config_int(c, key, 0, 1LL << 24) : 0;
  }
  // Absent from bundles written before imported checkpoints: the neutral values.
  o.arch.positions = c.contains("positions") ? config_int(c, "positions", 0, 1 << 20) : 0;
  o.arch.type_vocab_size = c.contains("type_vocab_size") ? config_int(c, "type_vocab_size", 0, 1 << 16) : 0;
  o.arch.layer_norm_eps = c.contains("layer_norm_eps") ? config_double(c, "layer_norm_eps", 1e-15, 0.1) : 1e-12;
  o.arch.pooler = c.contains("pooler") ? config_bool(c, "pooler") : true;
  o.arch.heads_per_layer = parse_heads_per_layer(c, o.arch);
  o.tokenizer = c.contains("tokenizer") ? config_string(c, "tokenizer") : "char";
  // Absent from bundles written before it: they read punctuation as characters.
  o.fold_punctuation = c.contains("fold_punctuation") ? config_bool(c, "fold_punctuation") : false;
  o.classifier = c.contains("classifier") ? config_bool(c, "classifier") : true;
  if (o.tokenizer != "char" && o.tokenizer != "wordpiece") throw ConfigError("tokenizer", "must be char or wordpiece");
  o.freeze_layers = c.contains("freeze_layers") ? static_cast<int>(config_int(c, "freeze_layers", 0, 48)) : 0;
  o.pretrained_lr = c.contains("pretrained_lr") ? config_double(c, "pretrained_lr", 1e-9, 1.0) : 2e-5;
  o.vocab_min_count = static_cast<int>(config_int(c, "vocab_min_count", 1, 1000000));
  o.vocab_max_size = static_cast<int>(config_int(c, "vocab_max_size", 16, 1000000));
  o.batch_size = static_cast<int>(config_int(c, "batch_size", 1, 65536));
  o.predict_batch_size = static_cast<int>(config_int(c, "predict_batch_size", 1, 65536));
  o.epochs = static_cast<int>(config_int(c, "epochs", 1, 1000));
  o.pretrain_epochs = static_cast<int>(config_int(c, "pretrain_epochs", 0, 1000));
  o.continued_pretrain_epochs = c.contains("continued_pretrain_epochs")
                                    ? static_cast<int>(config_int(c, "continued_pretrain_epochs", 1, 1000))
                                    : kContinuedPretrainEpochs;
  o.lr = config_double(c, "lr", 1e-7, 1.0);
  o.pretrain_lr = config_double(c, "pretrain_lr", 1e-7, 1.0);
  o.warmup = config_double(c, "warmup", 0.0, 0.9);
  o.weight_decay = config_double(c, "weight_decay", 0.0, 1.0);
  o.clip_norm = config_double(c, "clip_norm", 0.0, 1e6);
  o.mask_prob = config_double(c, "mask_prob", 0.01, 0.9);
  // Absent from bundles written before it: trained without joining.
  o.join_prob = c.contains("join_prob") ? config_double(c, "join_prob", 0.0, 1.0) : 0.0;
  o.max_steps = config_int(c, "max_steps", 0, 1LL << 40);
  o.pretrain_max_steps = config_int(c, "pretrain_max_steps", 0, 1LL << 40);
  o.patience = static_cast<int>(config_int(c, "patience", 1, 1000));
  o.max_threads = static_cast<int>(config_int(c, "max_threads", 1, 1024));
  if (o.arch.hidden % o.arch.heads != 0) throw ConfigError("heads", "hidden must be a multiple of heads");
  if (o.arch.positions > 0 && o.arch.positions < o.arch.max_len) {
    throw ConfigError("positions", "a table of " + std::to_string(o.arch.positions) + " rows is shorter than max_len (" +
                                       std::to_string(o.arch.max_len) + ")");
  }
  return o;
}

void set_architecture(nlohmann::json& config, const Architecture& arch) {
  config["layers"] = arch.layers;
  config["hidden"] = arch.hidden;
  config["heads"] = arch.heads;
  config["ff"] = arch.ff;
  config["max_len"] = arch.max_len;
  config["bigram_buckets"] = arch.bigram_buckets;
  config["trigram_buckets"] = arch.trigram_buckets;
  config["positions"] = arch.positions;
  config["type_vocab_size"] = arch.type_vocab_size;
  config["layer_norm_eps"] = arch.layer_norm_eps;
  config["pooler"] = arch.pooler;
  if (!arch.heads_per_layer.empty()) {
    config["heads_per_layer"] = arch.heads_per_layer;
  } else {
    config.erase("heads_per_layer");
  }
}

void check_known_keys(const nlohmann::json& config) { check_config_keys(config, default_options_json(), "bert"); }

namespace {

// A classifier without a head could not classify: training gives it one.
void refuse_headless(const Options& o) {
  if (!o.classifier) {
    throw ConfigError("classifier", "false marks an imported encoder without a head (import-hf); training gives it one");
  }
}

}  // namespace

// Keys that import-hf and --init hf: set. Given by hand, training ran to the end and wrote a
// bundle that could not load (wordpiece without its vocabulary) or could not classify.
void refuse_import_keys(const Options& o) {
  if (o.tokenizer != "char") {
    throw ConfigError("tokenizer", "wordpiece comes with an imported vocab.txt (import-hf, or train --init hf:DIR); "
                                   "training from the titles builds a char vocabulary");
  }
  refuse_headless(o);
}

// Refused before pretraining is spent on it (it was found after).
void refuse_architecture_mistakes(const Options& o) {
  if (o.freeze_layers > o.arch.layers) {
    throw ConfigError("freeze_layers", std::to_string(o.freeze_layers) + " exceeds layers (" +
                                           std::to_string(o.arch.layers) + ")");
  }
  if (!o.arch.pooler) throw ConfigError("pooler", "a classifier reads the pooler's output");
}

void check_trainable(const Options& o, const std::string& init_dir) {
  if (init_dir.empty()) {
    refuse_import_keys(o);
    refuse_architecture_mistakes(o);
  } else if (init_dir.rfind(kHfInitPrefix, 0) != 0) {
    // An encoder bundle brings its vocabulary, WordPiece when continued from an imported
    // checkpoint: the tokenizer key is checked against it once it is read.
    refuse_headless(o);
  }
}

}  // namespace newscls::bert
