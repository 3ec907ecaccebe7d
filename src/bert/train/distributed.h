// Data-parallel training over processes with LibTorch's own distributed engine: ranks meet
// through a c10d::TCPStore on rank 0 (MASTER_ADDR:MASTER_PORT) and sum gradients with
// c10d::ProcessGroupGloo. Every rank holds the whole model and trains on its shard of each
// global batch; after the reduction all ranks take the same optimiser step.
//
//   Collective comm(ctx.distributed);                        // world_size 1: no sockets at all
//   auto rows = shard_rows(global_batch, comm.rank(), comm.world_size());
//   ... loss.backward() on rows ...
//   if (comm.reduce_gradients(model, rows.size() / double(global_batch.size()), loss)) throw ...;
//
// A rank that dies or stops answering makes the collectives of the others fail (at once when
// its sockets close, else after timeout_s); they then name it from the heartbeats every rank
// keeps in the store, and throw.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "bert/model/tensor_io.h"
#include "newscls/core/classifier.h"

namespace newscls::bert {

// The rows of a global batch that `rank` trains on: every world_size-th, from position rank.
std::vector<std::size_t> shard_rows(const std::vector<std::size_t>& global_rows, int rank, int world_size);

// How a sparse embedding table's gradient is combined: "gather" all-gathers each rank's
// touched rows (the default), "dense" all-reduces the whole table. Environment variable
// NEWSCLS_SPARSE_REDUCE chooses (for the benchmark that compares them).
enum class SparseReduce { kGather, kDense };

class Collective {
 public:
  explicit Collective(const DistributedSettings& settings);
  ~Collective();
  Collective(const Collective&) = delete;
  Collective& operator=(const Collective&) = delete;

  int rank() const { return settings_.rank; }
  int world_size() const { return settings_.world_size; }
  bool active() const { return settings_.world_size > 1; }
  bool is_root() const { return settings_.rank == 0; }

  // Overwrites every rank's tensors with rank 0's.
  void broadcast(const NamedTensors& state);
  // Rank 0's values to every rank.
  std::vector<double> broadcast(std::vector<double> values);
  // Sums over ranks each rank's gradients of `module` scaled by `weight` (its share of the
  // global batch), so every rank ends with the gradient of the whole batch; `loss` likewise
  // becomes the batch's mean loss. Returns true when some rank was interrupted (SIGINT).
  bool reduce_gradients(torch::nn::Module& module, double weight, double& loss);
  // Throws unless every rank passes the same value (e.g. the step a resumed run starts at).
  void check_same(std::int64_t value, const std::string& what);
  // Throws unless every rank passes the same parts, naming those that differ
  // ("the ranks disagree on <what>: config.lr, seed").
  void check_same(const SettingsFingerprint& parts, const std::string& what);
  void barrier();

  // Time spent in and bytes sent to gradient reductions, for metrics.json.
  double reduce_seconds() const { return reduce_seconds_; }
  nlohmann::json facts() const;

 private:
  struct Group;
  [[noreturn]] void fail(const std::string& during, const std::exception& e);
  // Every rank's values, in rank order (all ranks pass as many).
  std::vector<std::vector<std::int64_t>> gather(const std::vector<std::int64_t>& values, const std::string& what);
  void reduce_sparse(torch::Tensor& param, double weight);
  std::pair<torch::Tensor, torch::Tensor> gather_rows(const torch::Tensor& rows, const torch::Tensor& values);

  DistributedSettings settings_;
  std::unique_ptr<Group> group_;
  SparseReduce sparse_mode_ = SparseReduce::kGather;
  double reduce_seconds_ = 0;
  std::uint64_t reduce_bytes_ = 0;
  std::int64_t reductions_ = 0;
};

}  // namespace newscls::bert
