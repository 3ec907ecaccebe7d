#include "bert/train/training.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <random>

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include "bert/model/tensor_io.h"
#include "bert/tokens/batching.h"
#include "bert/tokens/vocab.h"
#include "bert/train/optimiser.h"
#include "newscls/core/atomic_file.h"
#include "newscls/core/binary_io.h"
#include "newscls/core/error.h"
#include "newscls/core/interrupt.h"
#include "newscls/core/metrics.h"
#include "newscls/core/progress.h"
#include "newscls/core/stopwatch.h"

namespace newscls::bert {
namespace {

namespace fs = std::filesystem;
constexpr char kStateMagic[4] = {'N', 'C', 'B', 'C'};
constexpr std::uint32_t kStateVersion = 1;

std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t stream, std::uint64_t epoch) {
  return seed * 0x9E3779B97F4A7C15ULL + stream * 0xD1B54A32D192ED03ULL + epoch;
}

std::vector<std::vector<std::size_t>> rows_by_label(const std::vector<int>& labels) {
  std::vector<std::vector<std::size_t>> by_label;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] < 0) continue;  // a title without a label (distillation's --unlabelled) joins nothing
    const auto label = static_cast<std::size_t>(labels[i]);
    if (label >= by_label.size()) by_label.resize(label + 1);
    by_label[label].push_back(i);
  }
  return by_label;
}

std::vector<std::size_t> lengths_of(const Encoded& titles) {
  std::vector<std::size_t> lengths;
  lengths.reserve(titles.size());
  for (const auto& t : titles) lengths.push_back(t.size());
  return lengths;
}

std::int64_t total_steps(std::size_t n, int batch_size, int epochs, std::int64_t max_steps) {
  const auto per_epoch = static_cast<std::int64_t>((n + batch_size - 1) / batch_size);
  const std::int64_t total = per_epoch * epochs;
  return max_steps > 0 ? std::min(total, max_steps) : total;
}

void optimiser_step(Optimiser& optimizer, const Settings& o, double peak_lr, std::int64_t step, std::int64_t total) {
  optimizer.step(scheduled_lr(step, total, peak_lr, o.warmup), o.clip_norm);
}

struct MaskedBatch {
  torch::Tensor inputs, positions, targets;
};

// BERT's MLM corruption over real tokens (padding, [CLS] and [SEP] never chosen).
MaskedBatch mask_tokens(const Batch& batch, double mask_prob, std::int64_t vocab_size, const MaskIds& special,
                        std::mt19937_64& gen) {
  MaskedBatch out;
  out.inputs = batch.ids.clone();
  auto ids = out.inputs.accessor<std::int64_t, 2>();
  const auto valid = batch.key_valid.accessor<bool, 2>();
  const std::int64_t b = ids.size(0), t = ids.size(1);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<std::int64_t> random_token(special.first_random,
                                                           std::max(special.first_random, vocab_size - 1));
  std::vector<std::int64_t> positions, targets;
  for (std::int64_t i = 0; i < b; ++i) {
    for (std::int64_t j = 0; j < t; ++j) {
      const std::int64_t id = ids[i][j];
      if (!valid[i][j] || id == special.pad || id == special.cls || id == special.sep || unit(gen) >= mask_prob)
        continue;
      positions.push_back(i * t + j);
      targets.push_back(id);
      const double r = unit(gen);
      if (r < 0.8) {
        ids[i][j] = special.mask;
      } else if (r < 0.9) {
        ids[i][j] = random_token(gen);
      }
    }
  }
  if (positions.empty()) {  // keep the loss defined: predict the first token as is
    positions.push_back(0);
    targets.push_back(ids[0][0]);
  }
  out.positions = torch::tensor(positions, torch::kInt64);
  out.targets = torch::tensor(targets, torch::kInt64);
  return out;
}

int world_of(const Collective* comm) { return comm != nullptr ? comm->world_size() : 1; }
bool distributed(const Collective* comm) { return comm != nullptr && comm->active(); }
bool is_root(const Collective* comm) { return comm == nullptr || comm->is_root(); }

// Dropout and masking differ between ranks; rank 0 draws what a single process draws.
std::uint64_t rank_seed(std::uint64_t seed, const Collective* comm) {
  return comm == nullptr ? seed : seed ^ (static_cast<std::uint64_t>(comm->rank()) * 0xA24BAED4963EE407ULL);
}

// Zeroes the gradients, runs loss_of on this rank's shard of a global batch and leaves every
// rank with the gradient of the whole batch; returns the batch's mean loss. A rank with an
// empty shard contributes nothing. All ranks stop together when one was interrupted.
template <typename LossOf>
double shard_backward(Optimiser& optimizer, torch::nn::Module& module, Collective* comm,
                      const std::vector<std::size_t>& global_rows, LossOf loss_of) {
  optimizer.zero_grad();
  const std::vector<std::size_t> rows =
      distributed(comm) ? shard_rows(global_rows, comm->rank(), comm->world_size()) : global_rows;
  double loss = 0;
  if (!rows.empty()) {
    torch::Tensor l = loss_of(rows);
    l.backward();
    loss = l.item<double>();
  }
  if (distributed(comm)) {
    const double weight = static_cast<double>(rows.size()) / static_cast<double>(global_rows.size());
    if (comm->reduce_gradients(module, weight, loss)) throw InterruptedError();
  } else {
    check_interrupted();
  }
  return loss;
}

nlohmann::json distributed_facts(const Collective* comm, double step_seconds) {
  if (!distributed(comm)) return nlohmann::json::object();
  nlohmann::json facts = comm->facts();
  facts["reduce_share"] = step_seconds > 0 ? comm->reduce_seconds() / step_seconds : 0.0;
  return facts;
}

std::string step_text(double loss, std::size_t titles, double seconds) {
  return fmt::format("loss {:.4f}  {:.0f} titles/s", loss, seconds > 0 ? titles / seconds : 0.0);
}

// Everything a resumed fine-tuning run needs besides the optimiser.
struct FineTuneState {
  int next_epoch = 0;
  std::int64_t step = 0;
  double best_f1 = -1;
  int bad_epochs = 0;
  bool stopped = false;
  nlohmann::json history = nlohmann::json::array();
  double train_seconds = 0;
  std::uint64_t train_titles = 0;
  double cpu_seconds = 0;  // process CPU time in training steps (not checkpointed)
};

struct CheckpointPaths {
  fs::path dir;
  fs::path state() const { return dir / "state.bin"; }
  fs::path model() const { return dir / "model.bin"; }
  fs::path best() const { return dir / "best.bin"; }
};

// <root>/bert_checkpoint is the checkpoint; the writer builds the next one in .tmp and
// swaps it in through .old (see swap_in_checkpoint).
fs::path current_checkpoint(const fs::path& root) { return root / "bert_checkpoint"; }
fs::path previous_checkpoint(const fs::path& root) { return root / "bert_checkpoint.old"; }

void write_checkpoint_state(const fs::path& path, const FineTuneState& s) {
  PayloadWriter w(path.string(), kStateMagic, kStateVersion);
  w.u32(static_cast<std::uint32_t>(s.next_epoch));
  w.u64(static_cast<std::uint64_t>(s.step));
  w.f64(s.best_f1);
  w.u32(static_cast<std::uint32_t>(s.bad_epochs));
  w.u8(s.stopped ? 1 : 0);
  w.f64(s.train_seconds);
  w.u64(s.train_titles);
  w.str(s.history.dump());
  w.finish();
}

// Two renames: current -> .old, .tmp -> current. A crash between them leaves only .old,
// which read_checkpoint falls back to; so .old is dropped only while a current one exists
// to replace it, and removed for good once the new one is in place.
void swap_in_checkpoint(const fs::path& root, const fs::path& tmp_dir) {
  const fs::path final_dir = current_checkpoint(root), old_dir = previous_checkpoint(root);
  if (fs::exists(final_dir)) {
    fs::remove_all(old_dir);
    fs::rename(final_dir, old_dir);
  }
  fs::rename(tmp_dir, final_dir);
  sync_path(root.string());
  fs::remove_all(old_dir);
}

void write_checkpoint(const fs::path& root, const FineTuneState& s, const NamedTensors& model, const NamedTensors& best,
                      Optimiser& optimizer) {
  CheckpointPaths tmp{root / "bert_checkpoint.tmp"};
  fs::remove_all(tmp.dir);
  fs::create_directories(tmp.dir);
  save_tensors(tmp.model().string(), model);
  save_tensors(tmp.best().string(), best);
  optimizer.save(tmp.dir.string());
  write_checkpoint_state(tmp.state(), s);
  sync_tree(tmp.dir.string());  // the files are whole on disk before the rename names them
  swap_in_checkpoint(root, tmp.dir);
}

// The directory to resume from: the current checkpoint, else the previous one that a crash
// between swap_in_checkpoint's renames left behind; empty when there is neither.
fs::path checkpoint_to_resume(const fs::path& root) {
  for (const fs::path& dir : {current_checkpoint(root), previous_checkpoint(root)}) {
    if (fs::exists(CheckpointPaths{dir}.state())) return dir;
  }
  return {};
}

void read_checkpoint_state(const fs::path& path, FineTuneState& s) {
  PayloadReader r(path.string(), kStateMagic, kStateVersion);
  s.next_epoch = static_cast<int>(r.u32());
  s.step = static_cast<std::int64_t>(r.u64());
  s.best_f1 = r.f64();
  s.bad_epochs = static_cast<int>(r.u32());
  s.stopped = r.u8() != 0;
  s.train_seconds = r.f64();
  s.train_titles = r.u64();
  try {
    s.history = nlohmann::json::parse(r.str());
  } catch (const nlohmann::json::exception&) {
    throw ModelFormatError(path.string(), "corrupt history");
  }
  r.expect_end();
}

bool read_checkpoint(const fs::path& root, FineTuneState& s, const NamedTensors& model, NamedTensors& best,
                     Optimiser& optimizer) {
  CheckpointPaths paths{checkpoint_to_resume(root)};
  if (paths.dir.empty()) return false;
  if (paths.dir != current_checkpoint(root)) {
    spdlog::warn("resuming from {}: the run stopped while replacing its checkpoint", paths.dir.string());
  }
  read_checkpoint_state(paths.state(), s);
  load_tensors(paths.model().string(), model);
  load_tensors(paths.best().string(), best);
  optimizer.load(paths.dir.string());
  return true;
}

double dev_macro_f1(ClassifierModel model, const FineTuneJob& job, int batch_size) {
  torch::Tensor probs = predict_probs(model, *job.dev, batch_size);
  torch::Tensor predicted = probs.argmax(1);
  std::vector<int> pred(predicted.data_ptr<std::int64_t>(), predicted.data_ptr<std::int64_t>() + predicted.numel());
  return compute_metrics(*job.dev_labels, pred, *job.labels).macro_f1;
}

}  // namespace

double scheduled_lr(std::int64_t step, std::int64_t total, double peak, double warmup_fraction) {
  const double warm = std::max(1.0, std::floor(warmup_fraction * static_cast<double>(total)));
  const double s = static_cast<double>(step) + 1.0;
  if (s <= warm) return peak * s / warm;
  const double rest = std::max(1.0, static_cast<double>(total) - warm);
  return peak * std::max(0.0, 1.0 - (s - warm) / rest);
}

nlohmann::json pretrain_mlm(Encoder encoder, const std::shared_ptr<MaskRng>& rng, const Settings& o,
                            const PretrainJob& job) {
  MlmModel mlm(encoder, rng);
  mlm->train();
  if (job.comm != nullptr) job.comm->broadcast(named_state(*mlm));
  Optimiser optimizer(*mlm, o.pretrain_lr, o.weight_decay);
  const std::vector<std::size_t> lengths = lengths_of(*job.titles);
  const std::size_t global_batch = static_cast<std::size_t>(o.batch_size) * world_of(job.comm);
  const std::int64_t total =
      total_steps(lengths.size(), static_cast<int>(global_batch), o.pretrain_epochs, o.pretrain_max_steps);
  std::mt19937_64 mask_gen(rank_seed(mix_seed(job.seed, 3, 0), job.comm));
  if (job.comm != nullptr) job.comm->check_same(total, "the number of pretraining steps (same data and settings?)");
  Progress bar("pretrain", static_cast<std::size_t>(total));
  std::int64_t step = 0;
  double seconds = 0, ema_loss = 0;
  std::size_t titles = 0;
  for (int epoch = 0; epoch < o.pretrain_epochs && step < total; ++epoch) {
    rng->reseed(rank_seed(mix_seed(job.seed, 1, epoch), job.comm));
    std::mt19937_64 shuffle(mix_seed(job.seed, 2, epoch));  // the same global batches on every rank
    for (const auto& rows : bucket_batches(lengths, global_batch, &shuffle)) {
      if (step >= total) break;
      const Stopwatch watch;
      const double l = shard_backward(optimizer, *mlm, job.comm, rows, [&](const std::vector<std::size_t>& mine) {
        Batch batch = make_batch(*job.titles, mine, nullptr);
        MaskedBatch mb = mask_tokens(batch, o.mask_prob, job.vocab_size, job.ids, mask_gen);
        return torch::cross_entropy_loss(mlm(mb.inputs, batch.key_valid, mb.positions), mb.targets);
      });
      optimiser_step(optimizer, o, o.pretrain_lr, step, total);
      ++step;
      seconds += watch.seconds();
      titles += rows.size();
      ema_loss = step == 1 ? l : 0.98 * ema_loss + 0.02 * l;
      bar.advance(1, step_text(ema_loss, titles, seconds));
    }
  }
  bar.finish();
  encoder->eval();
  spdlog::info("pretrain: {} steps, mlm loss {:.4f}, {:.0f} titles/s", step, ema_loss,
               seconds > 0 ? titles / seconds : 0.0);
  nlohmann::json facts = {{"pretrain_steps", step},
                          {"pretrain_mlm_loss", ema_loss},
                          {"pretrain_seconds", seconds},
                          {"pretrain_titles_per_s", seconds > 0 ? titles / seconds : 0.0}};
  if (distributed(job.comm)) facts["pretrain_distributed"] = distributed_facts(job.comm, seconds);
  return facts;
}

bool has_checkpoint(const std::string& work_dir) {
  return !work_dir.empty() && !checkpoint_to_resume(work_dir).empty();
}

namespace {

// What one fine-tuning run carries from step to step and epoch to epoch.
struct FineTuneRun {
  FineTuneRun(ClassifierModel m, const Settings& options, const FineTuneJob& j)
      : model(std::move(m)),
        o(options),
        job(j),
        lengths(lengths_of(*j.train)),
        global_batch(static_cast<std::size_t>(options.batch_size) * world_of(j.comm)),
        by_label(rows_by_label(*j.train_labels)),
        total(total_steps(lengths.size(), static_cast<int>(global_batch), options.epochs, options.max_steps)),
        optimizer(*model, options.lr, options.weight_decay),
        live(named_state(*model)),
        best(clone_state(live)) {}

  ClassifierModel model;
  const Settings& o;
  const FineTuneJob& job;
  std::vector<std::size_t> lengths;
  std::size_t global_batch;  // batch_size per rank x ranks
  std::vector<std::vector<std::size_t>> by_label;
  std::int64_t total;
  Optimiser optimizer;
  NamedTensors live, best;
  FineTuneState s;
  double resumed_seconds = 0;  // the earlier processes' wall time, up to the checkpoint continued
  double ema_loss = 0;
};

// The batch with join_prob of its titles joined to another of their class. Each title's draws
// depend on the seed, the step and the title only: a resumed run joins the same titles, and
// ranks that share a batch join each title as one process would.
Batch joined_batch(const FineTuneRun& r, const std::vector<std::size_t>& rows) {
  const std::uint64_t step_seed = mix_seed(r.job.seed, 6, static_cast<std::uint64_t>(r.s.step));
  Encoded titles;
  titles.reserve(rows.size());
  for (std::size_t row : rows) {
    std::mt19937_64 gen(mix_seed(step_seed, 7, row));
    titles.push_back(
        join_same_label(*r.job.train, row, r.by_label, *r.job.train_labels, r.o.join_prob, r.o.arch.max_len, gen));
  }
  std::vector<int> labels;
  labels.reserve(rows.size());
  for (std::size_t row : rows) labels.push_back((*r.job.train_labels)[row]);
  std::vector<std::size_t> local(rows.size());
  for (std::size_t i = 0; i < local.size(); ++i) local[i] = i;
  Batch batch = make_batch(titles, local, &labels);
  batch.rows = rows;
  return batch;
}

void fine_tune_step(FineTuneRun& r, const std::vector<std::size_t>& rows, Progress& bar) {
  FineTuneState& s = r.s;
  const Stopwatch watch;
  const std::clock_t cpu_start = std::clock();
  const double l = shard_backward(r.optimizer, *r.model, r.job.comm, rows, [&](const std::vector<std::size_t>& mine) {
    Batch batch = r.o.join_prob > 0 ? joined_batch(r, mine) : make_batch(*r.job.train, mine, r.job.train_labels);
    return r.job.loss ? r.job.loss(r.model, batch)
                      : torch::cross_entropy_loss(r.model(batch.ids, batch.key_valid), batch.labels);
  });
  if (!std::isfinite(l)) {  // NaN weights would be saved as a bundle that answers NaN
    throw Error(ErrorKind::kConfig,
                fmt::format("fine-tuning diverged: the loss is {} at step {} (try a lower lr)", l, s.step + 1));
  }
  optimiser_step(r.optimizer, r.o, r.o.lr, s.step, r.total);
  ++s.step;
  s.train_seconds += watch.seconds();
  s.cpu_seconds += static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  s.train_titles += rows.size();
  r.ema_loss = r.ema_loss == 0 ? l : 0.98 * r.ema_loss + 0.02 * l;
  bar.advance(1, step_text(r.ema_loss, s.train_titles, s.train_seconds));
}

void fine_tune_epoch(FineTuneRun& r, const std::shared_ptr<MaskRng>& rng, int epoch, Progress& bar) {
  r.model->train();
  rng->reseed(rank_seed(mix_seed(r.job.seed, 4, epoch), r.job.comm));
  std::mt19937_64 shuffle(mix_seed(r.job.seed, 5, epoch));  // the same global batches on every rank
  for (const auto& rows : bucket_batches(r.lengths, r.global_batch, &shuffle)) {
    if (r.s.step >= r.total) break;
    fine_tune_step(r, rows, bar);
  }
}

// Scores dev, keeps the best weights, decides on early stopping and records the epoch.
void end_fine_tune_epoch(FineTuneRun& r, int epoch, bool use_dev) {
  FineTuneState& s = r.s;
  nlohmann::json record = {{"epoch", epoch + 1}, {"step", s.step}, {"train_loss", r.ema_loss}};
  if (r.job.since_start != nullptr) record["wall_seconds"] = r.resumed_seconds + r.job.since_start->seconds();
  if (use_dev) {
    // Rank 0 scores dev; every rank takes its score, so all keep the same best weights and stop together.
    const double own = is_root(r.job.comm) ? dev_macro_f1(r.model, r.job, r.o.predict_batch_size) : 0.0;
    const double f1 = r.job.comm != nullptr ? r.job.comm->broadcast(std::vector<double>{own})[0] : own;
    record["dev_macro_f1"] = f1;
    if (f1 > s.best_f1) {
      s.best_f1 = f1;
      s.bad_epochs = 0;
      r.best = clone_state(r.live);
    } else if (++s.bad_epochs >= r.o.patience) {
      s.stopped = epoch + 1 < r.o.epochs && s.step < r.total;  // after the last epoch nothing is cut short
    }
    spdlog::info("epoch {}: loss {:.4f}, dev macro-F1 {:.4f}{}", epoch + 1, r.ema_loss, f1,
                 s.stopped ? " (early stop)" : "");
  }
  s.history.push_back(record);
  s.next_epoch = epoch + 1;
}

nlohmann::json fine_tune_facts(const FineTuneState& s, const Collective* comm) {
  const double rate = s.train_seconds > 0 ? s.train_titles / s.train_seconds : 0.0;
  return {{"steps", s.step},
          {"epochs_run", s.next_epoch},
          {"best_dev_macro_f1", s.best_f1},
          {"early_stopped", s.stopped},
          {"history", s.history},
          {"train_step_seconds", s.train_seconds},
          {"train_titles_per_s", rate},
          {"train_titles_per_cpu_s", s.cpu_seconds > 0 ? s.train_titles / s.cpu_seconds : 0.0},
          {"world_size", world_of(comm)},
          {"distributed", distributed_facts(comm, s.train_seconds)}};
}

}  // namespace

nlohmann::json fine_tune(ClassifierModel model, const std::shared_ptr<MaskRng>& rng, const Settings& o,
                         const FineTuneJob& job) {
  FineTuneRun r(std::move(model), o, job);
  FineTuneState& s = r.s;
  r.resumed_seconds = job.resumed_seconds;
  if (job.comm != nullptr) {
    job.comm->check_same(r.total, "the number of optimiser steps (same data and settings?)");
    job.comm->broadcast(r.live);
  }
  const bool checkpoints = !job.checkpoint_dir.empty();
  if (checkpoints && job.resume && read_checkpoint(job.checkpoint_dir, s, r.live, r.best, r.optimizer)) {
    spdlog::info("resuming fine-tuning at epoch {} (step {})", s.next_epoch + 1, s.step);
    if (!s.history.empty() && s.history.back().contains("wall_seconds"))
      r.resumed_seconds = s.history.back()["wall_seconds"];
    // The loss average goes on from the epoch that ended there, as in a run never interrupted.
    if (!s.history.empty() && s.history.back().contains("train_loss")) r.ema_loss = s.history.back()["train_loss"];
  }
  // Every rank reads the checkpoint from work_dir (shared, or copied to each machine).
  if (job.comm != nullptr)
    job.comm->check_same(s.step, "the step to resume from (each needs <out>.work/bert_checkpoint)");
  const bool use_dev = job.dev != nullptr && !job.dev->empty();
  Progress bar("fine-tune", static_cast<std::size_t>(r.total));
  if (s.step > 0) bar.advance(static_cast<std::size_t>(s.step));
  for (int epoch = s.next_epoch; epoch < o.epochs && s.step < r.total && !s.stopped; ++epoch) {
    fine_tune_epoch(r, rng, epoch, bar);
    end_fine_tune_epoch(r, epoch, use_dev);
    if (checkpoints && is_root(job.comm)) write_checkpoint(job.checkpoint_dir, s, r.live, r.best, r.optimizer);
  }
  if (job.comm != nullptr) job.comm->barrier();  // no rank leaves while another still trains
  bar.finish();
  if (use_dev && s.best_f1 >= 0) copy_state(r.best, r.live);
  r.model->eval();
  nlohmann::json facts = fine_tune_facts(s, job.comm);
  if (r.resumed_seconds > 0) facts[kResumedSecondsFact] = r.resumed_seconds;
  return facts;
}

torch::Tensor predict_probs(ClassifierModel model, const Encoded& titles, int batch_size) {
  c10::InferenceMode guard;
  model->eval();
  torch::Tensor out = torch::empty({static_cast<std::int64_t>(titles.size()), 0});
  bool shaped = false;
  for (const auto& rows : bucket_batches(lengths_of(titles), batch_size, nullptr)) {
    Batch batch = make_batch(titles, rows, nullptr);
    torch::Tensor probs = torch::softmax(model(batch.ids, batch.key_valid), 1);
    if (!shaped) {
      out = torch::empty({static_cast<std::int64_t>(titles.size()), probs.size(1)});
      shaped = true;
    }
    std::vector<std::int64_t> index(rows.begin(), rows.end());
    out.index_copy_(0, torch::tensor(index, torch::kInt64), probs);
  }
  return out;
}

}  // namespace newscls::bert
