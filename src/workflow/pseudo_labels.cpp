#include "workflow/pseudo_labels.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <utility>

namespace newscls {
namespace {

struct Candidate {
  std::size_t row;
  int label;
  double confidence;
};

// The class every model names, or kUnknownLabel when they differ or one has no answer.
int agreed_label(const std::vector<std::vector<Prediction>>& votes, std::size_t i) {
  const int label = votes[0][i].label;
  for (const auto& model : votes) {
    if (model[i].label == kUnknownLabel || model[i].label != label || model[i].probs.empty()) return kUnknownLabel;
  }
  return label;
}

double mean_probability(const std::vector<std::vector<Prediction>>& votes, std::size_t i, int label) {
  double sum = 0;
  for (const auto& model : votes) sum += model[i].probs[static_cast<std::size_t>(label)];
  return sum / static_cast<double>(votes.size());
}

}  // namespace

nlohmann::json PseudoLabels::facts() const {
  return {{"kept", rows.size()}, {"candidates", candidates}, {"disagreed", disagreed}, {"per_class", per_class}};
}

std::vector<double> class_shares(const std::vector<int>& labels, int classes) {
  std::vector<double> shares(static_cast<std::size_t>(classes), 0.0);
  for (int label : labels) shares[static_cast<std::size_t>(label)] += 1.0;
  for (double& s : shares) s /= std::max<double>(1.0, static_cast<double>(labels.size()));
  return shares;
}

PseudoLabels select_pseudo_labels(const std::vector<std::vector<Prediction>>& votes, const std::vector<double>& shares,
                                  const PseudoLabelRule& rule) {
  if (votes.empty()) throw std::invalid_argument("select_pseudo_labels: no model voted");
  const std::size_t n = votes[0].size();
  for (const auto& model : votes) {
    if (model.size() != n) throw std::invalid_argument("select_pseudo_labels: models voted on different titles");
  }
  PseudoLabels out;
  out.per_class.assign(shares.size(), 0);
  std::vector<std::vector<Candidate>> by_class(shares.size());
  for (std::size_t i = 0; i < n; ++i) {
    const int label = agreed_label(votes, i);
    if (label == kUnknownLabel) {
      if (votes.size() > 1 && votes[0][i].label != kUnknownLabel) ++out.disagreed;
      continue;
    }
    const double confidence = mean_probability(votes, i, label);
    if (confidence < rule.min_confidence) continue;
    by_class.at(static_cast<std::size_t>(label)).push_back({i, label, confidence});
    ++out.candidates;
  }
  std::vector<std::pair<std::size_t, int>> kept;
  for (std::size_t c = 0; c < by_class.size(); ++c) {
    auto& list = by_class[c];
    const auto cap =
        static_cast<std::size_t>(std::ceil(rule.share_tolerance * shares[c] * static_cast<double>(out.candidates)));
    // Most confident first; the earlier title on a tie, so the choice does not depend on the sort.
    std::sort(list.begin(), list.end(), [](const Candidate& a, const Candidate& b) {
      return a.confidence != b.confidence ? a.confidence > b.confidence : a.row < b.row;
    });
    if (list.size() > cap) list.resize(cap);
    out.per_class[c] = list.size();
    for (const Candidate& k : list) kept.emplace_back(k.row, k.label);
  }
  std::sort(kept.begin(), kept.end());
  for (const auto& [row, label] : kept) {
    out.rows.push_back(row);
    out.labels.push_back(label);
  }
  return out;
}

double pseudo_label_change(const PseudoLabels& a, const PseudoLabels& b) {
  std::set<std::pair<std::size_t, int>> in_a, in_b;
  for (std::size_t k = 0; k < a.rows.size(); ++k) in_a.emplace(a.rows[k], a.labels[k]);
  for (std::size_t k = 0; k < b.rows.size(); ++k) in_b.emplace(b.rows[k], b.labels[k]);
  auto missing = [](const auto& from, const auto& in) {
    std::size_t count = 0;
    for (const auto& pair : from) count += in.count(pair) == 0 ? 1 : 0;
    return from.empty() ? 0.0 : static_cast<double>(count) / static_cast<double>(from.size());
  };
  return std::max(missing(in_a, in_b), missing(in_b, in_a));
}

}  // namespace newscls
