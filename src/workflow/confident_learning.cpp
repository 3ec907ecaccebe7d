#include "workflow/confident_learning.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "newscls/core/error.h"

namespace newscls {
namespace {

// cleanlab's allowance: a probability a rounding error below its threshold still counts.
constexpr double kThresholdSlack = 1e-6;

using Rows = std::vector<std::size_t>;

std::size_t at(int c) { return static_cast<std::size_t>(c); }

int most_probable(const std::vector<float>& p) {
  return static_cast<int>(std::max_element(p.begin(), p.end()) - p.begin());  // the first on ties
}

// The class of highest probability among those at or above their threshold; -1 for none.
int confident_class(const std::vector<float>& p, const std::vector<double>& thresholds) {
  int best = -1;
  for (std::size_t j = 0; j < p.size(); ++j) {
    if (p[j] >= thresholds[j] - kThresholdSlack && (best < 0 || p[j] > p[at(best)])) best = static_cast<int>(j);
  }
  return best;
}

// The rows labelled each class, among those with probabilities.
std::vector<Rows> rows_by_label(const std::vector<std::vector<float>>& probs, const std::vector<int>& labels,
                                int num_classes) {
  std::vector<Rows> rows(at(num_classes));
  for (std::size_t r = 0; r < labels.size(); ++r) {
    if (!probs[r].empty()) rows[at(labels[r])].push_back(r);
  }
  return rows;
}

// Each row scaled to the titles given that label, then the whole to all titles judged.
std::vector<std::vector<double>> calibrate_joint(const std::vector<std::vector<std::size_t>>& joint,
                                                 const std::vector<Rows>& by_label, std::size_t judged) {
  std::vector<std::vector<double>> out(joint.size(), std::vector<double>(joint.size(), 0.0));
  double total = 0;
  for (std::size_t i = 0; i < joint.size(); ++i) {
    const double row_sum = static_cast<double>(std::accumulate(joint[i].begin(), joint[i].end(), std::size_t{0}));
    if (row_sum == 0) continue;
    for (std::size_t j = 0; j < joint.size(); ++j) {
      out[i][j] = static_cast<double>(joint[i][j]) / row_sum * static_cast<double>(by_label[i].size());
      total += out[i][j];
    }
  }
  if (total > 0) {
    for (auto& row : out)
      for (double& v : row) v *= static_cast<double>(judged) / total;
  }
  return out;
}

// The n rows of `rows` with the highest key (ties: the lower row).
template <typename Key>
Rows top_rows(Rows rows, std::size_t n, Key key) {
  n = std::min(n, rows.size());
  const auto first = [&](std::size_t a, std::size_t b) {
    const double ka = key(a), kb = key(b);
    return ka != kb ? ka > kb : a < b;
  };
  std::partial_sort(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(n), rows.end(), first);
  rows.resize(n);
  return rows;
}

std::size_t rounded(double v) { return static_cast<std::size_t>(std::llround(std::max(0.0, v))); }

std::vector<bool> by_noise_rate(const std::vector<std::vector<float>>& probs, const LabelAudit& a,
                                const std::vector<Rows>& by_label) {
  std::vector<bool> flagged(probs.size(), false);
  for (std::size_t i = 0; i < by_label.size(); ++i) {
    for (std::size_t j = 0; j < by_label.size(); ++j) {
      if (i == j) continue;
      const auto margin = [&](std::size_t r) { return double(probs[r][j]) - double(probs[r][i]); };
      for (std::size_t r : top_rows(by_label[i], rounded(a.calibrated[i][j]), margin)) flagged[r] = true;
    }
  }
  return flagged;
}

std::vector<bool> by_class(const std::vector<std::vector<float>>& probs, const LabelAudit& a,
                           const std::vector<Rows>& by_label) {
  std::vector<bool> flagged(probs.size(), false);
  for (std::size_t i = 0; i < by_label.size(); ++i) {
    const double off_diagonal =
        std::accumulate(a.calibrated[i].begin(), a.calibrated[i].end(), 0.0) - a.calibrated[i][i];
    const auto doubt = [&](std::size_t r) { return -double(probs[r][i]); };
    for (std::size_t r : top_rows(by_label[i], rounded(off_diagonal), doubt)) flagged[r] = true;
  }
  return flagged;
}

std::vector<bool> off_diagonal(const std::vector<std::vector<float>>& probs, const std::vector<int>& labels,
                               const std::vector<double>& thresholds) {
  std::vector<bool> flagged(probs.size(), false);
  for (std::size_t r = 0; r < probs.size(); ++r) {
    if (probs[r].empty()) continue;
    const int confident = confident_class(probs[r], thresholds);
    flagged[r] = confident >= 0 && confident != labels[r];
  }
  return flagged;
}

std::vector<bool> flagged_rows(const std::vector<std::vector<float>>& probs, const std::vector<int>& labels,
                               const LabelAudit& a, const std::vector<Rows>& by_label, IssueFilter filter) {
  switch (filter) {
    case IssueFilter::kJoint: return off_diagonal(probs, labels, a.thresholds);
    case IssueFilter::kNoiseRate: return by_noise_rate(probs, a, by_label);
    case IssueFilter::kClass: return by_class(probs, a, by_label);
    case IssueFilter::kBoth: break;
  }
  std::vector<bool> both = by_noise_rate(probs, a, by_label);
  const std::vector<bool> other = by_class(probs, a, by_label);
  for (std::size_t r = 0; r < both.size(); ++r) both[r] = both[r] && other[r];
  return both;
}

// A caller's mistake, not the user's: the probabilities come from the workflow.
void check_shapes(const std::vector<std::vector<float>>& probs, const std::vector<int>& labels, int num_classes) {
  const auto refuse = [](const std::string& what) { throw std::invalid_argument("confident learning: " + what); };
  if (probs.size() != labels.size()) refuse("as many rows of probabilities as labels expected");
  for (std::size_t r = 0; r < labels.size(); ++r) {
    if (labels[r] < 0 || labels[r] >= num_classes) refuse("label out of range in row " + std::to_string(r));
    if (!probs[r].empty() && probs[r].size() != at(num_classes)) {
      refuse("row " + std::to_string(r) + " is not one probability a class");
    }
  }
}

}  // namespace

const std::vector<std::string>& issue_filter_names() {
  static const std::vector<std::string> names = {"joint", "noise-rate", "class", "both"};
  return names;
}

IssueFilter issue_filter_named(const std::string& name) {
  const auto& names = issue_filter_names();
  const auto found = std::find(names.begin(), names.end(), name);
  if (found == names.end()) throw UsageError("no issue filter named '" + name + "' (joint, noise-rate, class or both)");
  return static_cast<IssueFilter>(found - names.begin());
}

double wrong_label_score(const std::vector<float>& probs, int given) {
  return std::clamp(1.0 - double(probs[at(given)]), 0.0, 1.0);
}

std::vector<double> per_class_thresholds(const std::vector<std::vector<float>>& probs, const std::vector<int>& labels,
                                         int num_classes) {
  std::vector<double> sum(at(num_classes), 0.0);
  std::vector<std::size_t> count(at(num_classes), 0);
  for (std::size_t r = 0; r < labels.size(); ++r) {
    if (probs[r].empty()) continue;
    sum[at(labels[r])] += probs[r][at(labels[r])];
    ++count[at(labels[r])];
  }
  std::vector<double> thresholds(at(num_classes), std::numeric_limits<double>::infinity());
  for (std::size_t j = 0; j < thresholds.size(); ++j) {
    if (count[j] > 0) thresholds[j] = sum[j] / static_cast<double>(count[j]);
  }
  return thresholds;
}

LabelAudit find_label_issues(const std::vector<std::vector<float>>& probs, const std::vector<int>& labels,
                             int num_classes, IssueFilter filter) {
  check_shapes(probs, labels, num_classes);
  LabelAudit a;
  a.thresholds = per_class_thresholds(probs, labels, num_classes);
  a.joint.assign(at(num_classes), std::vector<std::size_t>(at(num_classes), 0));
  for (std::size_t r = 0; r < probs.size(); ++r) {
    if (probs[r].empty()) continue;
    ++a.judged;
    const int confident = confident_class(probs[r], a.thresholds);
    if (confident >= 0) ++a.joint[at(labels[r])][at(confident)];
  }
  const std::vector<Rows> by_label = rows_by_label(probs, labels, num_classes);
  a.calibrated = calibrate_joint(a.joint, by_label, a.judged);
  const std::vector<bool> flagged = flagged_rows(probs, labels, a, by_label, filter);
  for (std::size_t r = 0; r < probs.size(); ++r) {
    if (!flagged[r]) continue;
    const int suggested = most_probable(probs[r]);
    if (suggested == labels[r]) continue;  // the model itself would keep the given label
    a.issues.push_back({r, labels[r], suggested, wrong_label_score(probs[r], labels[r])});
  }
  std::sort(a.issues.begin(), a.issues.end(), [](const LabelIssue& x, const LabelIssue& y) {
    return x.score != y.score ? x.score > y.score : x.row < y.row;
  });
  return a;
}

}  // namespace newscls
