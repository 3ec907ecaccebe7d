#include "bert/model/settings.h"

#include "newscls/core/config.h"
#include "newscls/core/error.h"

namespace newscls::bert {
namespace {

// Absent or [] (bundles written before pruning existed): every layer has `heads`.
std::vector<std::int64_t> parse_heads_per_layer(const nlohmann::json& v, const Architecture& arch) {
  std::vector<std::int64_t> out;
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

// Keys marked optional or absent_reads are missing from bundles written before they existed.
const ConfigTable<Settings>& settings_table() {
  using K = ConfigKey;
  using A = Architecture;
  static const ConfigTable<Settings> table(
      "bert",
      {
          {K::integer("layers", 2, 1, 48, "encoder layers (post-LN, as in BERT)"), field(&Settings::arch, &A::layers)},
          {K::integer("hidden", 256, 8, 4096, "model width; a multiple of heads"), field(&Settings::arch, &A::hidden)},
          {K::integer("heads", 4, 1, 64, "attention heads per layer; each has hidden/heads dimensions"),
           field(&Settings::arch, &A::heads)},
          {K::integer("ff", 512, 8, 16384, "width of the GELU feed-forward block"), field(&Settings::arch, &A::ff)},
          {K::integer("max_len", 64, 3, 512, "tokens per title including [CLS] and [SEP]; longer titles are cut"),
           field(&Settings::arch, &A::max_len)},
          {K::number("dropout", 0.1, 0.0, 0.9, "dropout on embeddings, sublayer outputs and the classifier input"),
           field(&Settings::arch, &A::dropout)},
          {K::number("attention_dropout", 0.1, 0.0, 0.9,
                     "dropout on the attention weights (dumps show undropped weights)"),
           field(&Settings::arch, &A::attention_dropout)},
          // Bundles written before these keys existed have no n-gram embeddings.
          {K::integer("bigram_buckets", 32768, 0, 1LL << 24,
                      "hashed character-bigram embedding rows added to each token's input; 0 = none")
               .absent_reads(0),
           field(&Settings::arch, &A::bigram_buckets)},
          {K::integer("trigram_buckets", 0, 0, 1LL << 24,
                      "hashed character-trigram embedding rows added to each token's input; 0 = none (32768 rows "
                      "measured worse than none on dev: macro-F1 0.9044 vs 0.9072, without pretraining)")
               .optional(),
           field(&Settings::arch, &A::trigram_buckets)},
          {K::integer("positions", 0, 0, 1 << 20,
                      "rows of the position table; 0 = max_len (an imported checkpoint keeps its own)")
               .optional(),
           field(&Settings::arch, &A::positions)},
          {K::integer("type_vocab_size", 0, 0, 1 << 16,
                      "token-type (segment) table rows; 0 = none; imported BERT: 2, titles use type 0")
               .optional(),
           field(&Settings::arch, &A::type_vocab_size)},
          {K::number("layer_norm_eps", 1e-12, 1e-15, 0.1,
                     "epsilon of every LayerNorm (an imported checkpoint's layer_norm_eps)")
               .optional(),
           field(&Settings::arch, &A::layer_norm_eps)},
          {K::boolean("pooler", true,
                      "tanh pooler over [CLS] (feeds the classifier); false only for an imported encoder without one")
               .optional(),
           field(&Settings::arch, &A::pooler)},
          {K::list("heads_per_layer", nlohmann::json::array(),
                   "heads of each layer after `compress --method prune` (each hidden/heads wide); [] = heads in every "
                   "layer")
               .optional(),
           {[](Settings& s, const nlohmann::json& v) { s.arch.heads_per_layer = parse_heads_per_layer(v, s.arch); },
            [](const Settings& s) { return nlohmann::json(s.arch.heads_per_layer); }}},
          {K::choice("tokenizer", "char", {"char", "wordpiece"},
                     "char: own character vocabulary built from train; wordpiece: an imported vocab.txt (set by "
                     "import-hf / --init hf:)")
               .optional(),
           field(&Settings::tokenizer)},
          // Absent from bundles written before it: they read punctuation as characters.
          {K::boolean(
               "fold_punctuation", false,
               "char tokenizer: every punctuation mark except the ASCII ones inside numbers and names reads as a "
               "space, as THUCNews separates clauses with spaces where other outlets write \"，\" \"？\" \"！\" "
               "(which THUCNews keeps mostly in sports titles); the vocabulary still lists the marks, so an "
               "encoder pretrained without folding fits; off: with join_prob 0.25 it adds nothing on dev or on "
               "joined dev titles (dev macro-F1 0.9096 against 0.9106; joined 0.970 against 0.974)")
               .optional(),
           field(&Settings::fold_punctuation)},
          {K::boolean("classifier", true,
                      "false only for an imported encoder without a classifier head: embed and attention work, predict "
                      "and eval need train --init hf:DIR first")
               .optional(),
           field(&Settings::classifier)},
          {K::integer("freeze_layers", 0, 0, 48,
                      "fine-tuning keeps the embeddings and the first N encoder layers fixed; 0 = train all")
               .optional(),
           field(&Settings::freeze_layers)},
          {K::number(
               "pretrained_lr", 2e-5, 1e-9, 1.0,
               "peak learning rate when fine-tuning from a Hugging Face checkpoint (--init hf:DIR) instead of lr; "
               "BERT's usual 2e-5")
               .optional(),
           field(&Settings::pretrained_lr)},
          {K::integer("vocab_min_count", 2, 1, 1000000,
                      "a character needs this many occurrences in train to get an id"),
           field(&Settings::vocab_min_count)},
          {K::integer("vocab_max_size", 8000, 16, 1000000, "vocabulary cap including the 5 special tokens"),
           field(&Settings::vocab_max_size)},
          {K::integer("batch_size", 64, 1, 65536, "training titles per optimiser step; batches are bucketed by length"),
           field(&Settings::batch_size)},
          {K::integer("predict_batch_size", 256, 1, 65536, "titles per forward pass at prediction time"),
           field(&Settings::predict_batch_size)},
          {K::integer("epochs", 2, 1, 1000,
                      "fine-tuning epochs (early stopping may end sooner); the learning rate decays to 0 over them: 2 "
                      "reached dev macro-F1 0.9150 after pretraining, 5 overfit (best epoch kept, 0.9049)"),
           field(&Settings::epochs)},
          {K::integer("pretrain_epochs", 2, 0, 1000,
                      "MLM epochs run by train when no --init is given; 0 skips pretraining"),
           field(&Settings::pretrain_epochs)},
          {K::integer(
               "continued_pretrain_epochs", 10, 1, 1000,
               "MLM epochs over the feed when adapt continues this bundle's encoder (domain-adaptive "
               "pretraining); 10 beat 2 on reverse validation at the same dev accuracy and keeps adapt within 30 "
               "minutes on 2 cores (docs/BENCHMARKS.md)")
               .optional(),
           field(&Settings::continued_pretrain_epochs)},
          {K::number("lr", 5e-4, 1e-7, 1.0, "peak AdamW learning rate for fine-tuning"), field(&Settings::lr)},
          {K::number("pretrain_lr", 5e-4, 1e-7, 1.0, "peak AdamW learning rate for MLM pretraining"),
           field(&Settings::pretrain_lr)},
          {K::number("warmup", 0.06, 0.0, 0.9, "fraction of steps with linear warm-up; linear decay to 0 after it"),
           field(&Settings::warmup)},
          {K::number("weight_decay", 0.01, 0.0, 1.0, "AdamW decoupled weight decay (not on biases, norms)"),
           field(&Settings::weight_decay)},
          {K::number("clip_norm", 1.0, 0.0, 1e6, "gradient norm clip; 0 disables"), field(&Settings::clip_norm)},
          {K::number("mask_prob", 0.15, 0.01, 0.9, "MLM: share of tokens chosen (80% [MASK], 10% random, 10% kept)"),
           field(&Settings::mask_prob)},
          // Absent from bundles written before it: trained without joining.
          {K::number(
               "join_prob", 0.25, 0.0, 1.0,
               "fine-tuning: share of training titles joined to another title of the same class ([CLS] a [SEP] b "
               "[SEP], cut at max_len), so that length stops telling the class: THUCNews sports titles are the "
               "longest (mean 24 characters, others 17-21) and the encoder without it sent titles longer than its "
               "training titles to sports (79% of random 40-character strings, 44% of other outlets' headlines); "
               "0 = off (bundles written before it): on dev 0.25 costs 0.37-0.63 points of macro-F1 over three "
               "runs (0.10: 0.59) and lifts two joined dev titles of one class from 0.72-0.74 to 0.97 "
               "(docs/BENCHMARKS.md)")
               .absent_reads(0.0),
           field(&Settings::join_prob)},
          {K::integer("max_steps", 0, 0, 1LL << 40, "cap on fine-tuning optimiser steps, for smoke tests; 0 = no cap"),
           field(&Settings::max_steps)},
          {K::integer("pretrain_max_steps", 0, 0, 1LL << 40, "cap on MLM optimiser steps; 0 = no cap"),
           field(&Settings::pretrain_max_steps)},
          {K::integer("patience", 2, 1, 1000, "epochs without a better dev macro-F1 before stopping"),
           field(&Settings::patience)},
          {K::integer(
               "max_threads", 1, 1, 1024,
               "LibTorch intra-op threads at most (--threads is capped by it); OpenBLAS keeps its own threads: on "
               "2 idle cores 1 LibTorch thread with 2 OpenBLAS threads trained fastest (193 titles/s vs 95 with 2 "
               "LibTorch threads)"),
           field(&Settings::max_threads)},
      });
  return table;
}

std::vector<std::string> execution_keys() { return {"max_threads", "predict_batch_size"}; }

Settings parse_settings(const nlohmann::json& c) {
  Settings o = settings_table().parse(c);
  if (o.arch.hidden % o.arch.heads != 0) throw ConfigError("heads", "hidden must be a multiple of heads");
  if (o.arch.positions > 0 && o.arch.positions < o.arch.max_len) {
    throw ConfigError("positions", "a table of " + std::to_string(o.arch.positions) +
                                       " rows is shorter than max_len (" + std::to_string(o.arch.max_len) + ")");
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

void check_known_keys(const nlohmann::json& config) { check_config_keys(config, settings_table().defaults(), "bert"); }

namespace {

// A classifier without a head could not classify: training gives it one.
void refuse_headless(const Settings& o) {
  if (!o.classifier) {
    throw ConfigError("classifier",
                      "false marks an imported encoder without a head (import-hf); training gives it one");
  }
}

}  // namespace

// Keys that import-hf and --init hf: set. Given by hand, training ran to the end and wrote a
// bundle that could not load (wordpiece without its vocabulary) or could not classify.
void refuse_import_keys(const Settings& o) {
  if (o.tokenizer != "char") {
    throw ConfigError("tokenizer",
                      "wordpiece comes with an imported vocab.txt (import-hf, or train --init hf:DIR); "
                      "training from the titles builds a char vocabulary");
  }
  refuse_headless(o);
}

// Refused before pretraining is spent on it (it was found after).
void refuse_architecture_mistakes(const Settings& o) {
  if (o.freeze_layers > o.arch.layers) {
    throw ConfigError("freeze_layers",
                      std::to_string(o.freeze_layers) + " exceeds layers (" + std::to_string(o.arch.layers) + ")");
  }
  if (!o.arch.pooler) throw ConfigError("pooler", "a classifier reads the pooler's output");
}

void check_trainable(const Settings& o, const std::string& init_dir) {
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
