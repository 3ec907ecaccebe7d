#include "fasttext/autotune.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include <spdlog/spdlog.h>

#include "fasttext/fit.h"
#include "newscls/core/interrupt.h"

namespace newscls::fasttext {
namespace {

using Clock = std::chrono::steady_clock;

// A random neighbour of the base settings; ranges are where this data behaved well.
Settings draw(const Settings& base, std::mt19937_64& rng) {
  auto uniform = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
  auto pick = [&](std::initializer_list<int> values) {
    std::vector<int> v(values);
    return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)];
  };
  Settings s = base;
  s.lr = std::exp(uniform(std::log(0.1), std::log(2.0)));
  s.epochs = pick({5, 8, 10, 15, 20});
  s.dropout = uniform(0.0, 0.4);
  s.dim = pick({50, 100});
  s.ngram_max = pick({2, 3, 4});
  s.ngram_min_count = pick({1, 2, 3});
  return s;
}

nlohmann::json trial_json(const Settings& s, double accuracy, double seconds) {
  return {{"lr", s.lr},
          {"epochs", s.epochs},
          {"dropout", s.dropout},
          {"dim", s.dim},
          {"ngram_max", s.ngram_max},
          {"ngram_min_count", s.ngram_min_count},
          {"dev_accuracy", accuracy},
          {"seconds", seconds}};
}

}  // namespace

AutotuneResult autotune(const Settings& base, const std::vector<std::string>& train_titles,
                        const std::vector<int>& train_labels, const std::vector<std::string>& dev_titles,
                        const std::vector<int>& dev_labels, int num_labels, const AutotuneOptions& options) {
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  std::mt19937_64 rng(options.seed ^ 0xa5a5a5a5ull);
  AutotuneResult result{base, nlohmann::json::object()};
  double best = -1, slowest = 0;
  nlohmann::json trials = nlohmann::json::array();
  for (int trial = 0;; ++trial) {
    if (trial > 0 && elapsed() + slowest > base.autotune_seconds) break;
    check_interrupted();
    const Settings s = trial == 0 ? base : draw(base, rng);
    const auto t0 = Clock::now();
    const FitResult fit = fit_engine(s, train_titles, train_labels, num_labels, {options.seed, options.threads, false});
    const double accuracy = engine_accuracy(fit.engine, dev_titles, dev_labels, options.threads);
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    slowest = std::max(slowest, seconds);
    trials.push_back(trial_json(s, accuracy, seconds));
    spdlog::info(
        "autotune trial {}: dev accuracy {:.4f} (lr {:.3f}, epochs {}, dropout {:.2f}, dim {}, ngram_max {}, "
        "ngram_min_count {}) in {:.1f} s",
        trial, accuracy, s.lr, s.epochs, s.dropout, s.dim, s.ngram_max, s.ngram_min_count, seconds);
    if (accuracy > best) {
      best = accuracy;
      result.settings = s;
    }
  }
  result.report = {{"trials", trials},
                   {"best_dev_accuracy", best},
                   {"seconds", elapsed()},
                   {"budget_seconds", base.autotune_seconds}};
  return result;
}

}  // namespace newscls::fasttext
