// Hyper-parameter search on the dev set within a time budget (settings.autotune_seconds).
//
// The first trial is the configured settings themselves; later trials draw lr, epochs,
// dropout, dim and ngram_max at random around them (seeded), and the best dev accuracy
// wins. A trial starts only when the budget still holds one more trial as long as the
// slowest so far. The report lists every trial for the manifest.
//
//   AutotuneResult r = autotune(settings, train_titles, train_labels, dev_titles,
//                               dev_labels, num_labels, {seed, threads});
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fasttext/settings.h"

namespace newscls::fasttext {

struct AutotuneOptions {
  std::uint64_t seed = 1;
  int threads = 1;
};

struct AutotuneResult {
  Settings settings;      // the winner, with autotune still set
  nlohmann::json report;  // trials, best dev accuracy, seconds used
};

AutotuneResult autotune(const Settings& base, const std::vector<std::string>& train_titles,
                        const std::vector<int>& train_labels, const std::vector<std::string>& dev_titles,
                        const std::vector<int>& dev_labels, int num_labels, const AutotuneOptions& options);

}  // namespace newscls::fasttext
