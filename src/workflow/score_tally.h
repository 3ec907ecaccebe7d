// The highest score of a run's answers, to tell a user whose --min-score no title reached: every
// title abstains then, with exit 0, and calibrated scores can stop short of 1 (a temperature
// over a probability floor caps them, e.g. fasttext's near 0.99).
#pragma once

#include <cstddef>

#include "newscls/core/classifier.h"

namespace newscls {

class ScoreTally {
 public:
  void add(const Prediction& p);
  // Warns when min_score (negative: none) is above every score added.
  void warn_if_none_reach(double min_score) const;

 private:
  std::size_t scored_ = 0;
  float top_ = 0;
};

}  // namespace newscls
