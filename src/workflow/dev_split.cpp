#include "workflow/dev_split.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "newscls/core/error.h"
#include "newscls/core/sha256.h"

namespace newscls {
namespace {

// Which positions of train go to dev: per class, a seeded shuffle's first share.
std::vector<bool> draw_dev(const std::vector<int>& labels, int num_labels, double fraction, std::uint64_t seed) {
  std::vector<std::vector<std::size_t>> by_class(static_cast<std::size_t>(num_labels));
  for (std::size_t i = 0; i < labels.size(); ++i) by_class[static_cast<std::size_t>(labels[i])].push_back(i);
  std::mt19937_64 rng(seed);
  std::vector<bool> to_dev(labels.size(), false);
  for (auto& members : by_class) {
    if (members.size() < 2) continue;  // a lone title is needed to learn its class
    std::shuffle(members.begin(), members.end(), rng);
    const auto share = static_cast<std::size_t>(std::llround(fraction * static_cast<double>(members.size())));
    const std::size_t n = std::clamp<std::size_t>(share, 1, members.size() - 1);
    for (std::size_t k = 0; k < n; ++k) to_dev[members[k]] = true;
  }
  return to_dev;
}

void move_title(Dataset& from, std::size_t i, Dataset& to) {
  to.titles.push_back(std::move(from.titles[i]));
  to.labels.push_back(from.labels[i]);
  to.line_numbers.push_back(from.line_numbers[i]);
}

}  // namespace

Dataset split_off_dev(Dataset& train, int num_labels, double fraction, std::uint64_t seed) {
  const std::vector<bool> to_dev = draw_dev(train.labels, num_labels, fraction, seed);
  if (std::find(to_dev.begin(), to_dev.end(), true) == to_dev.end()) {
    throw DataError(train.path, 0, "too few titles to draw a dev set from (no class has 2); give a dev file");
  }
  Dataset kept, dev;
  kept.path = train.path;
  kept.skipped_lines = train.skipped_lines;
  dev.path = train.path + " (dev split)";
  for (std::size_t i = 0; i < to_dev.size(); ++i) move_title(train, i, to_dev[i] ? dev : kept);
  train = std::move(kept);
  return dev;
}

std::string dev_lines_sha256(const Dataset& dev) {
  std::string lines;
  for (std::size_t line : dev.line_numbers) lines += std::to_string(line) + "\n";
  return sha256_hex(lines);
}

}  // namespace newscls
