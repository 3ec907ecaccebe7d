#include "fasttext/trainer.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <numeric>
#include <optional>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "newscls/core/interrupt.h"
#include "newscls/core/progress.h"
#include "newscls/core/stopwatch.h"

namespace newscls::fasttext {
namespace {

// Threads publish their step counts in chunks, so the shared counter is not a hot spot.
constexpr std::size_t kPublishEvery = 256;

struct Shared {
  std::atomic<std::size_t> steps{0};
  std::atomic<bool> stop{false};
  std::size_t total_steps = 0;
};

struct WorkerResult {
  double last_epoch_loss = 0;
  std::size_t last_epoch_count = 0;
};

void run_worker(Model& model, const Examples& ex, std::vector<std::size_t> order, const TrainOptions& opt,
                int thread_index, Shared& shared, WorkerResult& result) {
  std::mt19937_64 rng(opt.seed * 1000003ull + static_cast<std::uint64_t>(thread_index));
  Model::Scratch scratch(model);
  std::vector<std::int32_t> kept;
  std::bernoulli_distribution drop(opt.dropout);
  const float total = static_cast<float>(shared.total_steps);
  std::size_t pending = 0, seen_global = 0;
  for (int epoch = 0; epoch < opt.epochs && !shared.stop.load(std::memory_order_relaxed); ++epoch) {
    std::shuffle(order.begin(), order.end(), rng);
    double loss_sum = 0;
    for (std::size_t i : order) {
      const float progress = static_cast<float>(seen_global + pending) / total;
      const float lr = opt.lr * std::max(0.0f, 1.0f - progress);
      const std::size_t begin = ex.offsets[i], end = ex.offsets[i + 1];
      const std::int32_t* ids = ex.ids.data() + begin;
      std::size_t n = end - begin;
      if (opt.dropout > 0) {
        kept.clear();
        for (std::size_t k = 0; k < n; ++k) {
          if (!drop(rng)) kept.push_back(ids[k]);
        }
        ids = kept.data();
        n = kept.size();
      }
      loss_sum += model.update(ids, n, ex.labels[i], lr, scratch);
      if (++pending == kPublishEvery) {
        seen_global = shared.steps.fetch_add(pending, std::memory_order_relaxed) + pending;
        pending = 0;
        if (shared.stop.load(std::memory_order_relaxed)) return;
      }
    }
    result.last_epoch_loss = loss_sum;
    result.last_epoch_count = order.size();
  }
  shared.steps.fetch_add(pending, std::memory_order_relaxed);
}

// The main thread only watches: progress bar and signals.
void watch(Shared& shared, std::atomic<int>& running, bool show_progress) {
  std::optional<Progress> bar;
  if (show_progress) bar.emplace("fasttext train", shared.total_steps);
  std::size_t shown = 0;
  while (running.load() > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (interrupted()) shared.stop = true;
    const std::size_t now = std::min(shared.steps.load(), shared.total_steps);
    if (bar && now > shown) {
      bar->advance(now - shown);
      shown = now;
    }
  }
  if (bar) bar->finish();
}

}  // namespace

TrainStats train_model(Model& model, const Examples& examples, const TrainOptions& options) {
  const Stopwatch stopwatch;
  const int threads = std::max(1, std::min<int>(options.threads, static_cast<int>(examples.size())));
  Shared shared;
  shared.total_steps = std::max<std::size_t>(1, examples.size() * static_cast<std::size_t>(options.epochs));

  std::vector<std::size_t> all(examples.size());
  std::iota(all.begin(), all.end(), std::size_t{0});
  std::mt19937_64 rng(options.seed);
  std::shuffle(all.begin(), all.end(), rng);

  std::vector<WorkerResult> results(threads);
  std::vector<std::thread> workers;
  std::atomic<int> running{threads};
  for (int t = 0; t < threads; ++t) {
    const std::size_t lo = all.size() * t / threads, hi = all.size() * (t + 1) / threads;
    std::vector<std::size_t> share(all.begin() + lo, all.begin() + hi);
    workers.emplace_back([&, t, share = std::move(share)]() mutable {
      run_worker(model, examples, std::move(share), options, t, shared, results[t]);
      --running;
    });
  }
  watch(shared, running, options.show_progress);
  for (auto& w : workers) w.join();
  check_interrupted();

  TrainStats stats;
  double loss = 0;
  std::size_t count = 0;
  for (const auto& r : results) {
    loss += r.last_epoch_loss;
    count += r.last_epoch_count;
  }
  stats.last_epoch_loss = count ? loss / static_cast<double>(count) : 0.0;
  stats.steps = shared.steps.load();
  stats.seconds = stopwatch.seconds();
  return stats;
}

std::vector<float> idf_weights(const Examples& examples, std::int64_t rows) {
  std::vector<std::uint32_t> df(static_cast<std::size_t>(rows), 0);
  // last[r] = 1 + the last example that counted row r, so a title counts a row once.
  std::vector<std::uint32_t> last(static_cast<std::size_t>(rows), 0);
  for (std::size_t i = 0; i < examples.size(); ++i) {
    for (std::size_t k = examples.offsets[i]; k < examples.offsets[i + 1]; ++k) {
      const auto r = static_cast<std::size_t>(examples.ids[k]);
      if (last[r] != i + 1) {
        last[r] = static_cast<std::uint32_t>(i + 1);
        ++df[r];
      }
    }
  }
  const double n = static_cast<double>(examples.size());
  std::vector<float> idf(df.size(), 1.0f);
  for (std::size_t r = 0; r < df.size(); ++r) {
    if (df[r] > 0) idf[r] = static_cast<float>(std::log((1.0 + n) / (1.0 + df[r])) + 1.0);
  }
  return idf;
}

}  // namespace newscls::fasttext
