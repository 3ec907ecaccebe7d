// The one interface every model family's classifier implements.
//
// A classifier is configured (validated JSON config), trained on a TrainContext, and turns
// raw titles into Predictions. It saves itself as payloads of a bundle and loads back from
// one. Families and the registry that makes classifiers are in family.h and registry.h.
//
//   auto model = make_classifier("tfidf-rf");            // newscls/workflow/registry.h
//   nlohmann::json cfg = default_config("tfidf-rf");  apply_override(cfg, "n_trees=10");
//   model->configure(cfg);
//   model->train(ctx);
//   std::vector<Prediction> p = model->predict_batch(titles);
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "newscls/core/bundle.h"
#include "newscls/core/config.h"
#include "newscls/core/data.h"
#include "newscls/core/metrics.h"

namespace newscls {

struct Prediction {
  int label = kUnknownLabel;  // kUnknownLabel when the model gave no usable answer
  float score = 0;            // probability of `label`
  std::vector<float> probs;   // one per class; empty for an unknown answer
  int stage = -1;             // which member of a cascade answered; -1 elsewhere
  bool abstained = false;     // not answered at all (a blank title); label unknown
  bool failed = false;        // no request got a reply (an LLM's retries ran out); label unknown
};

// The most probable class of a probability vector (the first on ties).
Prediction prediction_from_probs(std::vector<float> probs);

// What a wrapper (the bundle's calibration) does to a family's probabilities before they
// are shown; empty for none.
using ProbsAdjust = std::function<void(std::vector<float>&)>;

// A title's vectors from an encoder (`newscls embed`).
struct Embedding {
  std::vector<float> cls;     // the last layer's hidden state at [CLS]
  std::vector<float> pooler;  // the tanh pooler's output; empty where the model has none
};

// Data-parallel training over several processes (torchrun's WORLD_SIZE, RANK, MASTER_ADDR,
// MASTER_PORT). world_size 1 is an ordinary run; a family that cannot spread its training
// refuses more (Family::trains_distributed).
struct DistributedSettings {
  int world_size = 1;
  int rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  int timeout_s = 300;  // a rank silent this long is reported lost
  bool enabled() const { return world_size > 1; }
};

constexpr const char* kResumedSecondsFact = "resumed_seconds";

struct TrainContext {
  const Dataset* train = nullptr;
  const Dataset* dev = nullptr;
  const LabelSet* labels = nullptr;
  // Titles of the outlet the model is meant for, without labels (--unlabeled): a family may
  // learn its vocabulary, document frequencies or pretraining text from them, never a label.
  const std::vector<std::string>* unlabeled = nullptr;
  std::uint64_t seed = 1;
  int threads = 1;      // resolved (>= 1); set_threads has been given the same before train
  std::string out_dir;  // where the bundle will be committed: read nothing there that it replaces
  // Scratch space that survives the run (checkpoints for --resume); never the bundle dir.
  std::string work_dir;
  bool resume = false;
  std::string init_dir;  // e.g. a pretrained encoder (bert --init DIR or hf:DIR)
  // Config keys the user gave (--set whatever its value, a --config file's keys off their
  // default): a key --init fixes is refused when given, even at its default value.
  std::vector<std::string> given_keys;
  std::string device = "cpu";
  DistributedSettings distributed;
  // Equal on every rank started with the same settings (config, seed, data, --init's bundle):
  // distributed training compares them before any work and names those that differ.
  SettingsFingerprint settings_fingerprint;
};

class Classifier {
 public:
  virtual ~Classifier() = default;
  virtual std::string family() const = 0;

  // Validates and adopts a full config; throws ConfigError naming the key.
  virtual void configure(const nlohmann::json& config) = 0;
  virtual nlohmann::json config() const = 0;

  // Throws ConfigError for a setting train would refuse in this config before any work, where
  // training starts from init_dir (TrainContext::init_dir; "" for a fresh model): train asks
  // before reading the data, the pipeline before its first stage.
  virtual void check_trainable(const std::string& init_dir) const {}

  // Fits on ctx.train, using ctx.dev only for model selection. Returns training facts
  // for the manifest and metrics.json (train_seconds, titles/s, chosen values...). A run that
  // continues a checkpoint (ctx.resume) says how long the processes before it had trained up
  // to that checkpoint as kResumedSecondsFact; train_seconds adds them.
  virtual nlohmann::json train(const TrainContext& ctx) = 0;

  // Raw titles in, one Prediction each, same order. Normalises internally.
  virtual std::vector<Prediction> predict_batch(const std::vector<std::string>& titles) = 0;
  virtual std::size_t preferred_batch_size() const { return 1024; }
  virtual void set_threads(int threads) {}
  // A call in which an LLM endpoint answered nothing at all throws (an outage: predict stops
  // rather than write "unknown" everywhere). After this, such titles come back marked `failed`
  // instead, for the caller to judge: serve each request, a cascade by its earlier members.
  virtual void tolerate_outages() {}
  // Tolerating outages, an LLM endpoint that left titles in a row unanswered is asked nothing
  // for a while: the seconds left of that pause now (0: not paused). Live state, not a count:
  // serve's /metrics shows it; run_stats and the files written from them do not hold it.
  virtual double endpoint_paused_s() const { return 0; }

  virtual void save(BundleWriter& bundle) const = 0;
  virtual void load(const Bundle& bundle) = 0;

  // Counters for metrics.json of a run (requests, cache hits, cost...); {} by default.
  virtual nlohmann::json run_stats() const { return nlohmann::json::object(); }
  // Starts those counters afresh: a cascade's threshold choice on dev is no part of its test run.
  virtual void reset_run_stats() {}
  // How many titles eval should use (a seeded stratified sample); 0 means all.
  virtual std::size_t eval_limit() const { return 0; }

  // Families with attention weights write i.json, i.npy and i.html for each title, with
  // i counted from first_index, the class shown scored as predict scores it (after adjust).
  // Others throw UsageError.
  virtual void dump_attention(const std::vector<std::string>& titles, std::size_t first_index,
                              const std::string& out_dir, const ProbsAdjust& adjust);
  // Families with an encoder give each title's vectors, same order. Others throw UsageError.
  virtual std::vector<Embedding> embed(const std::vector<std::string>& titles);
};

// model.predict_batch for the titles with text; a blank title (is_blank_title) is abstained
// without reaching the model, so no model guesses a class for nothing and no LLM is paid to.
std::vector<Prediction> predict_titles(Classifier& model, const std::vector<std::string>& titles);

}  // namespace newscls
