// c10d's Gloo process group is compiled into Debian's libtorch_cpu; its header is guarded
// (Torch's CMake config usually defines the guard already).
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO
#endif
#include "bert/train/distributed.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>

#include <netdb.h>
#include <sys/socket.h>

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "bert/train/optimiser.h"
#include "bert/train/watchdog.h"
#include "newscls/core/error.h"
#include "newscls/core/interrupt.h"
#include "newscls/core/stopwatch.h"

namespace newscls::bert {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

constexpr milliseconds kBeatPeriod{500};
// A rank whose heartbeat counter stands still this long is taken for lost.
constexpr milliseconds kSilence{2500};
// A joining step's c10d call may use the whole timeout; the watchdog allows this much more.
constexpr seconds kJoinGrace{5};

std::string joined_key(int rank) { return "newscls/joined/" + std::to_string(rank); }
std::string beat_key(int rank) { return "newscls/beat/" + std::to_string(rank); }

[[noreturn]] void throw_distributed(const std::string& message) {
  throw Error(ErrorKind::kIo, "distributed: " + message);
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

std::string rank_list(const std::vector<int>& ranks) {
  std::string out;
  for (int r : ranks) out += (out.empty() ? "" : ", ") + std::to_string(r);
  return out;
}

// c10d retries an address that does not resolve until the timeout, then speaks of a timeout.
void check_resolves(const std::string& addr) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(addr.c_str(), nullptr, &hints, &found);
  if (found != nullptr) freeaddrinfo(found);
  if (rc == 0) return;
  const std::string message = fmt::format("MASTER_ADDR '{}' does not resolve: {}", addr, gai_strerror(rc));
  if (rc == EAI_AGAIN) throw_distributed(message);  // the name server may answer later: no usage error
  throw UsageError(message);
}

c10::intrusive_ptr<c10d::TCPStore> open_store(const DistributedSettings& s, bool server) {
  c10d::TCPStoreOptions o;
  o.port = static_cast<std::uint16_t>(s.master_port);
  o.isServer = server;
  o.numWorkers = s.world_size;
  o.waitWorkers = false;  // joining is checked below, naming who is missing
  o.timeout = seconds(s.timeout_s);
  try {
    return c10::make_intrusive<c10d::TCPStore>(s.master_addr, o);
  } catch (const std::exception& e) {
    check_interrupted();  // c10d's connect fails with EINTR when a signal arrives
    if (server) {
      throw_distributed(fmt::format("rank 0 cannot open the store on port {} (MASTER_PORT): {}", s.master_port,
                                    first_line(e.what())));
    }
    throw_distributed(fmt::format("rank {} cannot reach the store at {}:{} within {} s (is rank 0 running?): {}",
                                  s.rank, s.master_addr, s.master_port, s.timeout_s, first_line(e.what())));
  }
}

// A client blocked on the store is usually talking to some other program on that port.
std::string listener_hint(const DistributedSettings& s) {
  return s.rank == 0 ? "" : " (is another program listening on MASTER_PORT?)";
}

bool is_loopback(const std::string& addr) { return addr == "localhost" || addr.rfind("127.", 0) == 0; }

// Loopback runs stay on lo; across machines GLOO_SOCKET_IFNAME (as in PyTorch) picks the
// interface, else the address this machine's hostname resolves to.
std::shared_ptr<::gloo::transport::Device> gloo_device(const std::string& master_addr) {
  if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname != nullptr && *ifname != '\0') {
    return c10d::ProcessGroupGloo::createDeviceForInterface(ifname);
  }
  if (is_loopback(master_addr)) return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  return c10d::ProcessGroupGloo::createDefaultDevice();
}

SparseReduce sparse_mode_from_env() {
  const char* mode = std::getenv("NEWSCLS_SPARSE_REDUCE");
  if (mode == nullptr || std::string(mode).empty() || std::string(mode) == "gather") return SparseReduce::kGather;
  if (std::string(mode) == "dense") return SparseReduce::kDense;
  throw ConfigError("NEWSCLS_SPARSE_REDUCE", "must be gather or dense, not '" + std::string(mode) + "'");
}

}  // namespace

std::vector<std::size_t> shard_rows(const std::vector<std::size_t>& global_rows, int rank, int world_size) {
  std::vector<std::size_t> rows;
  for (std::size_t i = static_cast<std::size_t>(rank); i < global_rows.size(); i += world_size) {
    rows.push_back(global_rows[i]);
  }
  return rows;
}

namespace {

// This rank's heartbeat: a counter in the store that a detached thread raises every
// kBeatPeriod on a store connection of its own. Detached and sharing this state, because a
// rank 0 that hangs without dying leaves the thread blocked in c10d's read for good: joining
// it would hang the rank that is reporting the loss.
struct Heartbeat {
  c10::intrusive_ptr<c10d::TCPStore> store;
  std::string key;
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;

  void run() {
    for (;;) {
      try {
        store->add(key, 1);
      } catch (const std::exception&) {
        return;  // the store (rank 0) is gone; the collectives report it
      }
      std::unique_lock<std::mutex> lock(mutex);
      if (wake.wait_for(lock, kBeatPeriod, [this] { return stopping; })) return;
    }
  }
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    wake.notify_all();
  }
};

}  // namespace

// The store, the process group and this rank's heartbeat.
struct Collective::Group {
  explicit Group(const DistributedSettings& s) : settings(s) {
    Watchdog watchdog;
    const auto limit = seconds(s.timeout_s) + kJoinGrace;
    const std::string at = fmt::format("{}:{}", s.master_addr, s.master_port);
    watchdog.arm(fmt::format("rank {} was looking up MASTER_ADDR '{}'", s.rank, s.master_addr), limit);
    check_resolves(s.master_addr);  // getaddrinfo has no timeout either
    watchdog.arm(fmt::format("rank {} was opening the store at {}", s.rank, at), limit, listener_hint(s));
    store = open_store(s, s.rank == 0);
    try {
      const std::string world = std::to_string(s.world_size);  // compared by the others as they join
      store->set(joined_key(s.rank), std::vector<std::uint8_t>(world.begin(), world.end()));
      wait_for_ranks(watchdog);
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {  // the peer closed: std::system_error from c10d's socket
      check_interrupted();
      throw_distributed(fmt::format("rank {} lost the store at {} while joining: {}{}", s.rank, at,
                                    first_line(e.what()), listener_hint(s)));
    }
    watchdog.arm(fmt::format("rank {} was connecting to the other ranks", s.rank), limit);
    auto options = c10d::ProcessGroupGloo::Options::create(seconds(s.timeout_s));
    try {
      options->devices.push_back(gloo_device(s.master_addr));
      options->threads = 1;
      group = c10::make_intrusive<c10d::ProcessGroupGloo>(store, s.rank, s.world_size, options);
    } catch (const std::exception& e) {
      check_interrupted();
      throw_distributed(fmt::format("rank {} cannot connect to the other ranks: {}", s.rank, first_line(e.what())));
    }
    watchdog.arm(fmt::format("rank {} was opening its heartbeat connection to {}", s.rank, at), limit,
                 listener_hint(s));
    heartbeat->store = open_store(s, false);
    heartbeat->key = beat_key(s.rank);
    watchdog.disarm();
    std::thread([beat = heartbeat] { beat->run(); }).detach();  // last: nothing after it may throw
    spdlog::info("distributed: rank {} of {} joined through {}:{}", s.rank, s.world_size, s.master_addr, s.master_port);
  }
  ~Group() { heartbeat->stop(); }

  void wait_for_ranks(Watchdog& watchdog) {
    const auto deadline = Clock::now() + seconds(settings.timeout_s);
    watchdog.arm(fmt::format("rank {} was waiting for the other ranks in the store at {}:{}", settings.rank,
                             settings.master_addr, settings.master_port),
                 seconds(settings.timeout_s) + kJoinGrace, listener_hint(settings));
    for (;;) {
      check_interrupted();
      std::vector<int> missing;
      for (int r = 0; r < settings.world_size; ++r) {
        if (!store->check({joined_key(r)})) {
          missing.push_back(r);
        } else if (r != settings.rank) {
          refuse_other_world_size(r);
        }
      }
      if (missing.empty()) return;
      if (Clock::now() > deadline) {
        throw_distributed(fmt::format("rank(s) {} did not join within {} s (WORLD_SIZE {}, store {}:{})",
                                      rank_list(missing), settings.timeout_s, settings.world_size, settings.master_addr,
                                      settings.master_port));
      }
      std::this_thread::sleep_for(milliseconds(100));
    }
  }

  // A rank started with another WORLD_SIZE waited out the timeout for ranks that never come,
  // and was then reported as missing.
  void refuse_other_world_size(int rank) {
    const std::vector<std::uint8_t> value = store->get(joined_key(rank));
    const std::string theirs(value.begin(), value.end());
    if (theirs == std::to_string(settings.world_size) || theirs.empty() ||
        !std::isdigit(static_cast<unsigned char>(theirs[0])))
      return;
    throw UsageError(
        fmt::format("rank {} was started with WORLD_SIZE {} and rank {} with WORLD_SIZE {}: start every "
                    "rank with the same WORLD_SIZE",
                    rank, theirs, settings.rank, settings.world_size));
  }

  // Ranks whose heartbeat stood still over kSilence; rank 0 when its store is unreachable.
  std::vector<int> silent_ranks() {
    try {
      std::vector<std::int64_t> before;
      for (int r = 0; r < settings.world_size; ++r) before.push_back(store->add(beat_key(r), 0));
      std::this_thread::sleep_for(kSilence);
      std::vector<int> silent;
      for (int r = 0; r < settings.world_size; ++r) {
        if (r != settings.rank && store->add(beat_key(r), 0) == before[r]) silent.push_back(r);
      }
      return silent;
    } catch (const std::exception&) {
      return {0};
    }
  }

  DistributedSettings settings;
  c10::intrusive_ptr<c10d::TCPStore> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group;
  std::shared_ptr<Heartbeat> heartbeat = std::make_shared<Heartbeat>();
};

Collective::Collective(const DistributedSettings& settings) : settings_(settings) {
  if (settings_.rank < 0 || settings_.rank >= settings_.world_size) {
    throw UsageError(fmt::format("RANK {} is outside 0..{}", settings_.rank, settings_.world_size - 1));
  }
  if (!active()) return;
  sparse_mode_ = sparse_mode_from_env();
  group_ = std::make_unique<Group>(settings_);
}

Collective::~Collective() = default;

void Collective::fail(const std::string& during, const std::exception& e) {
  spdlog::error("distributed: rank {}: {} failed ({}); looking for the lost rank", rank(), during,
                first_line(e.what()));
  std::vector<int> lost;
  {
    // The heartbeats are in rank 0's store: if rank 0 hangs without dying, asking blocks for ever.
    Watchdog watchdog;
    if (!is_root()) {
      watchdog.arm(fmt::format("rank {} was asking rank 0's store for the lost rank after {} failed ({})", rank(),
                               during, first_line(e.what())),
                   kSilence + kJoinGrace,
                   ": lost rank 0 (its store does not answer: hung?); every rank stops. Restart all ranks "
                   "(`train --resume` continues from the last checkpoint)");
    }
    lost = group_->silent_ranks();
  }
  if (lost.empty()) {
    throw_distributed(fmt::format("rank {}: {} failed or timed out after {} s with every rank still alive: {}", rank(),
                                  during, settings_.timeout_s, first_line(e.what())));
  }
  throw_distributed(
      fmt::format("lost rank {} (no heartbeat; {} on rank {} failed: {}); every rank stops. "
                  "Restart all ranks (`train --resume` continues from the last checkpoint)",
                  rank_list(lost), during, rank(), first_line(e.what())));
}

namespace {

template <typename Op>
void run_collective(Op op) {
  c10::intrusive_ptr<c10d::Work> work = op();
  work->wait();
}

}  // namespace

void Collective::broadcast(const NamedTensors& state) {
  if (!active()) return;
  torch::NoGradGuard no_grad;
  try {
    for (const auto& named : state) {
      std::vector<at::Tensor> one{named.second};
      run_collective([&] { return group_->group->broadcast(one); });
    }
  } catch (const std::exception& e) {
    fail("broadcast of the weights", e);
  }
}

std::vector<double> Collective::broadcast(std::vector<double> values) {
  if (!active()) return values;
  std::vector<at::Tensor> one{torch::tensor(values, torch::kFloat64)};
  try {
    run_collective([&] { return group_->group->broadcast(one); });
  } catch (const std::exception& e) {
    fail("broadcast from rank 0", e);
  }
  const double* p = one[0].data_ptr<double>();
  return std::vector<double>(p, p + values.size());
}

std::vector<std::vector<std::int64_t>> Collective::gather(const std::vector<std::int64_t>& values,
                                                          const std::string& what) {
  const auto n = static_cast<std::int64_t>(values.size());
  std::vector<at::Tensor> in{torch::tensor(values, torch::kInt64)};
  std::vector<std::vector<at::Tensor>> out(1);
  for (int r = 0; r < world_size(); ++r) out[0].push_back(torch::empty({n}, torch::kInt64));
  try {
    run_collective([&] { return group_->group->allgather(out, in); });
  } catch (const std::exception& e) {
    fail("comparing " + what, e);
  }
  std::vector<std::vector<std::int64_t>> all;
  for (const at::Tensor& t : out[0]) all.emplace_back(t.data_ptr<std::int64_t>(), t.data_ptr<std::int64_t>() + n);
  return all;
}

void Collective::check_same(std::int64_t value, const std::string& what) {
  if (!active()) return;
  const auto all = gather({value}, what);
  std::string values;
  bool same = true;
  for (int r = 0; r < world_size(); ++r) {
    same = same && all[r][0] == value;
    values += fmt::format("{}rank {}: {}", r == 0 ? "" : ", ", r, all[r][0]);
  }
  if (!same) throw_distributed("the ranks disagree on " + what + " (" + values + ")");
}

void Collective::check_same(const SettingsFingerprint& parts, const std::string& what) {
  if (!active()) return;
  // The count first: every rank must then gather vectors of one length.
  check_same(static_cast<std::int64_t>(parts.size()), "the number of settings (is every rank the same newscls?)");
  std::vector<std::int64_t> hashes;
  for (const auto& part : parts) hashes.push_back(part.second);
  const auto all = gather(hashes, what);
  std::string names;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const bool differs = std::any_of(all.begin(), all.end(), [&](const auto& rank) { return rank[i] != hashes[i]; });
    if (differs) names += (names.empty() ? "" : ", ") + parts[i].first;
  }
  if (!names.empty())
    throw_distributed("the ranks disagree on " + what + ": " + names +
                      (names.find(',') == std::string::npos ? " differs" : " differ"));
}

void Collective::barrier() {
  if (!active()) return;
  try {
    run_collective([&] { return group_->group->barrier(); });
  } catch (const std::exception& e) {
    fail("barrier", e);
  }
}

namespace {

// Dense gradients, one "had a gradient" flag per tensor, the loss and the stop flag, in one
// buffer so that a step costs a single all-reduce.
torch::Tensor pack_dense(const std::vector<torch::Tensor>& params, double weight, double loss, bool stop) {
  std::vector<torch::Tensor> parts;
  std::vector<float> flags;
  for (const torch::Tensor& p : params) {
    const bool has = p.grad().defined();
    parts.push_back(has ? p.grad().reshape(-1).mul(weight) : torch::zeros({p.numel()}));
    flags.push_back(has ? 1.0F : 0.0F);
  }
  flags.push_back(static_cast<float>(loss * weight));
  flags.push_back(stop ? 1.0F : 0.0F);
  parts.push_back(torch::tensor(flags, torch::kFloat32));
  return torch::cat(parts);
}

void unpack_dense(const torch::Tensor& buffer, const std::vector<torch::Tensor>& params) {
  std::int64_t offset = 0;
  const std::int64_t flags_at = buffer.numel() - static_cast<std::int64_t>(params.size()) - 2;
  for (std::size_t i = 0; i < params.size(); ++i) {
    torch::Tensor p = params[i];
    const torch::Tensor summed = buffer.slice(0, offset, offset + p.numel()).view(p.sizes());
    offset += p.numel();
    if (buffer[flags_at + static_cast<std::int64_t>(i)].item<float>() == 0.0F) continue;  // no rank had one
    if (p.grad().defined()) {
      p.mutable_grad().copy_(summed);
    } else {
      p.mutable_grad() = summed.clone();
    }
  }
}

}  // namespace

bool Collective::reduce_gradients(torch::nn::Module& module, double weight, double& loss) {
  if (!active()) return interrupted();
  const Stopwatch watch;
  torch::NoGradGuard no_grad;
  const std::set<std::string> sparse_names = sparse_gradient_weights(module);
  std::vector<torch::Tensor> dense, sparse;
  for (auto& p : module.named_parameters()) {
    if (!p.value().requires_grad()) continue;
    (sparse_names.count(p.key()) > 0 ? sparse : dense).push_back(p.value());
  }
  std::vector<at::Tensor> buffer{pack_dense(dense, weight, loss, interrupted())};
  reduce_bytes_ += static_cast<std::uint64_t>(buffer[0].numel()) * sizeof(float);
  try {
    run_collective([&] { return group_->group->allreduce(buffer); });
  } catch (const std::exception& e) {
    fail("the gradient all-reduce", e);
  }
  unpack_dense(buffer[0], dense);
  for (torch::Tensor& p : sparse) reduce_sparse(p, weight);
  loss = buffer[0][-2].item<double>();
  reduce_seconds_ += watch.seconds();
  ++reductions_;
  return buffer[0][-1].item<float>() > 0;
}

// Each rank's touched rows (padded to the longest) are all-gathered and concatenated, or
// the whole table is all-reduced; the optimiser coalesces duplicates either way.
void Collective::reduce_sparse(torch::Tensor& param, double weight) {
  torch::Tensor grad = param.grad().defined() ? param.grad().coalesce() : torch::Tensor();
  const std::int64_t width = param.size(1);
  torch::Tensor rows = grad.defined() ? grad._indices()[0] : torch::empty({0}, torch::kInt64);
  torch::Tensor values = grad.defined() ? grad._values().mul(weight) : torch::zeros({0, width});
  try {
    if (sparse_mode_ == SparseReduce::kDense) {
      std::vector<at::Tensor> table{torch::zeros(param.sizes()).index_add_(0, rows, values)};
      reduce_bytes_ += static_cast<std::uint64_t>(table[0].numel()) * sizeof(float);
      run_collective([&] { return group_->group->allreduce(table); });
      rows = table[0].ne(0).any(1).nonzero().reshape(-1);
      values = table[0].index_select(0, rows);
    } else {
      std::tie(rows, values) = gather_rows(rows, values);
    }
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    fail("the sparse gradient exchange", e);
  }
  if (rows.numel() == 0) {
    param.mutable_grad() = torch::Tensor();
    return;
  }
  param.mutable_grad() = torch::sparse_coo_tensor(rows.unsqueeze(0), values, param.sizes());
}

std::pair<torch::Tensor, torch::Tensor> Collective::gather_rows(const torch::Tensor& rows,
                                                                const torch::Tensor& values) {
  const int world = world_size();
  std::vector<at::Tensor> count{torch::tensor({rows.numel()}, torch::kInt64)};
  std::vector<std::vector<at::Tensor>> counts(1);
  for (int r = 0; r < world; ++r) counts[0].push_back(torch::empty({1}, torch::kInt64));
  run_collective([&] { return group_->group->allgather(counts, count); });
  std::int64_t longest = 0;
  for (const auto& c : counts[0]) longest = std::max(longest, c.item<std::int64_t>());
  std::vector<at::Tensor> in{torch::zeros({longest}, torch::kInt64), torch::zeros({longest, values.size(1)})};
  in[0].slice(0, 0, rows.numel()).copy_(rows);
  in[1].slice(0, 0, rows.numel()).copy_(values);
  reduce_bytes_ += static_cast<std::uint64_t>(longest) * (sizeof(std::int64_t) + values.size(1) * sizeof(float));
  std::vector<torch::Tensor> all_rows, all_values;
  for (int which = 0; which < 2; ++which) {
    std::vector<at::Tensor> one{in[which]};
    std::vector<std::vector<at::Tensor>> out(1);
    for (int r = 0; r < world; ++r) out[0].push_back(torch::empty_like(in[which]));
    run_collective([&] { return group_->group->allgather(out, one); });
    for (int r = 0; r < world; ++r) {
      const std::int64_t n = counts[0][r].item<std::int64_t>();
      (which == 0 ? all_rows : all_values).push_back(out[0][r].slice(0, 0, n));
    }
  }
  return {torch::cat(all_rows), torch::cat(all_values)};
}

nlohmann::json Collective::facts() const {
  const double steps = std::max<double>(1.0, static_cast<double>(reductions_));
  return {{"world_size", world_size()},
          {"sparse_reduce", sparse_mode_ == SparseReduce::kGather ? "gather" : "dense"},
          {"reduce_seconds", reduce_seconds_},
          {"reduce_bytes_per_step", static_cast<double>(reduce_bytes_) / steps}};
}

}  // namespace newscls::bert
