// Which titles of a reader's feed self-training takes, and with which label.
//
// Every model votes on each title (its calibrated probabilities); a title is a candidate when
// all of them name the same class and their mean probability of it is at least
// min_confidence. Of the N candidates, class c keeps at most ceil(share_tolerance x share_c x N),
// the most confident first, where share_c is the class's share of the labelled titles: a feed
// is mostly about other things than the classes, and those titles must not flood the class
// they look most like.
//
//   PseudoLabels p = select_pseudo_labels({student_votes, teacher_votes}, shares, rule);
//   p.rows[k] is a feed title's index, p.labels[k] its class
#pragma once

#include <cstddef>
#include <vector>

#include <nlohmann/json.hpp>

#include "newscls/core/classifier.h"

namespace newscls {

struct PseudoLabelRule {
  double min_confidence = 0.9;
  double share_tolerance = 1.5;
};

struct PseudoLabels {
  std::vector<std::size_t> rows;  // ascending
  std::vector<int> labels;
  std::size_t candidates = 0;  // agreed and confident, before the class caps
  std::size_t disagreed = 0;   // titles on which the models named different classes
  std::vector<std::size_t> per_class;
  nlohmann::json facts() const;
};

// votes[m][i]: model m's prediction of feed title i (every model the same number of titles).
PseudoLabels select_pseudo_labels(const std::vector<std::vector<Prediction>>& votes, const std::vector<double>& shares,
                                  const PseudoLabelRule& rule);

// Each class's share of the labels (classes of them).
std::vector<double> class_shares(const std::vector<int>& labels, int classes);

// The share of b's (title, label) pairs not in a, or of a's not in b, whichever is larger: how
// much a round changed what self-training learns from.
double pseudo_label_change(const PseudoLabels& a, const PseudoLabels& b);

}  // namespace newscls
