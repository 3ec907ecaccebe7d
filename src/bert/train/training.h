// The optimisation loops: MLM pretraining of an encoder and fine-tuning of a classifier.
//
// Both use AdamW (no decay on biases and norms), linear warm-up then linear decay, and
// gradient clipping. Fine-tuning evaluates dev macro-F1 after every epoch, keeps the best
// weights, stops after `patience` epochs without improvement, and writes a checkpoint to
// work_dir at the end of each epoch that a resumed run continues from. Shuffling and
// dropout are reseeded from (seed, epoch), so a resumed run repeats an uninterrupted one.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "bert/model/encoder.h"
#include "bert/model/settings.h"
#include "bert/tokens/batching.h"
#include "bert/tokens/vocab.h"
#include "bert/train/distributed.h"
#include "newscls/core/data.h"
#include "newscls/core/stopwatch.h"

namespace newscls::bert {

// Learning rate at optimiser step `step` (0-based) of `total`.
double scheduled_lr(std::int64_t step, std::int64_t total, double peak, double warmup_fraction);

// With a Collective of several ranks, batch_size is per rank: each optimiser step trains on
// a global batch of batch_size x world_size titles, each rank on its shard (shard_rows), and
// rank 0 alone evaluates dev and writes checkpoints.
struct PretrainJob {
  const Encoded* titles = nullptr;
  std::int64_t vocab_size = 0;
  std::uint64_t seed = 1;
  Collective* comm = nullptr;  // null: one process
  MaskIds ids;                 // a WordPiece vocabulary's own (TitleTokenizer::mask_ids)
};

// Trains encoder in place with masked-language modelling; returns facts for metrics.json.
nlohmann::json pretrain_mlm(Encoder encoder, const std::shared_ptr<MaskRng>& rng, const Settings& options,
                            const PretrainJob& job);

struct FineTuneJob {
  const Encoded* train = nullptr;
  const std::vector<int>* train_labels = nullptr;
  const Encoded* dev = nullptr;  // may be null: no early stopping
  const std::vector<int>* dev_labels = nullptr;
  const LabelSet* labels = nullptr;
  std::uint64_t seed = 1;
  std::string checkpoint_dir;  // "" = no checkpoints
  bool resume = false;
  Collective* comm = nullptr;  // null: one process
  // When set: the training's start in this process. Each epoch's history record keeps the wall
  // time so far (wall_seconds), counting the processes a resumed run continues.
  const Stopwatch* since_start = nullptr;
  // The wall time of earlier processes before this one's start (pretraining done by one that
  // stopped before its first checkpoint); a checkpoint continued brings its own.
  double resumed_seconds = 0;
  // Replaces cross-entropy on batch.labels as the training loss when set (distillation).
  std::function<torch::Tensor(ClassifierModel&, const Batch&)> loss;
};

nlohmann::json fine_tune(ClassifierModel model, const std::shared_ptr<MaskRng>& rng, const Settings& options,
                         const FineTuneJob& job);

// True when work_dir holds a checkpoint that a resumed fine_tune continues from: the
// current one, or the previous one when a crash came while it was being replaced.
bool has_checkpoint(const std::string& work_dir);

// Class probabilities (N, classes) in input order, batched by length, without autograd.
torch::Tensor predict_probs(ClassifierModel model, const Encoded& titles, int batch_size);

}  // namespace newscls::bert
