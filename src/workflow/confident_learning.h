// Confident learning (Northcutt, Jiang and Chuang 2021, "Confident Learning: Estimating
// Uncertainty in Dataset Labels"): which titles' given labels are likely wrong, judged from
// out-of-fold predicted probabilities (a model that never saw the title's label).
//
//   t_j          the mean probability of class j over the titles labelled j
//   joint[i][j]  titles labelled i whose most probable class among those at or above their
//                threshold is j (the confident joint); off the diagonal: likely mislabelled
//   calibrated   each row scaled to the titles labelled i, the whole to all titles: how many
//                titles of given label i truly belong to j
// Then a filter picks the titles (IssueFilter), and a title the model would give its own
// label to anyway (the argmax is the given class) is never flagged.
//
//   LabelAudit a = find_label_issues(oof_probs, labels, 10, IssueFilter::kNoiseRate);
//   a.issues.front().row: the title most likely mislabelled
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace newscls {

enum class IssueFilter {
  kJoint,      // every title off the confident joint's diagonal
  kNoiseRate,  // per (given i, true j): round(calibrated[i][j]) titles labelled i of largest p_j - p_i
  kClass,      // per given i: round(its calibrated off-diagonal sum) titles of lowest p_i
  kBoth,       // in both kNoiseRate and kClass
};

// The names the command line takes ("joint", "noise-rate", "class", "both"), in that order.
const std::vector<std::string>& issue_filter_names();
IssueFilter issue_filter_named(const std::string& name);  // UsageError for another name

struct LabelIssue {
  std::size_t row = 0;  // index into the probabilities given
  int given = 0;
  int suggested = 0;  // the most probable class (never the given one)
  double score = 0;   // how likely the given label is wrong, 0..1 (wrong_label_score)
};

struct LabelAudit {
  std::vector<double> thresholds;               // t_j; +infinity for a class no title has
  std::vector<std::vector<std::size_t>> joint;  // [given][true]
  std::vector<std::vector<double>> calibrated;  // [given][true], summing to the titles judged
  std::size_t judged = 0;                       // titles with probabilities
  std::vector<LabelIssue> issues;               // most likely wrong first (score, then row)
};

// 1 - p(given): the model's probability that the title is not of its given class.
double wrong_label_score(const std::vector<float>& probs, int given);

// probs[r] has num_classes probabilities, or none (a title the model gave no answer: neither
// counted nor flagged); labels[r] is its given class.
std::vector<double> per_class_thresholds(const std::vector<std::vector<float>>& probs, const std::vector<int>& labels,
                                         int num_classes);
LabelAudit find_label_issues(const std::vector<std::vector<float>>& probs, const std::vector<int>& labels,
                             int num_classes, IssueFilter filter);

}  // namespace newscls
