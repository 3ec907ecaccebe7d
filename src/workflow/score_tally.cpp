#include "workflow/score_tally.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "newscls/core/metrics.h"

namespace newscls {

void ScoreTally::add(const Prediction& p) {
  if (p.abstained || p.label < 0) return;  // blank titles and unknown replies have no score
  ++scored_;
  top_ = std::max(top_, p.score);
}

void ScoreTally::warn_if_none_reach(double min_score) const {
  if (min_score < 0 || scored_ == 0 || !below_min_score(top_, min_score)) return;  // as abstention compares
  spdlog::warn(
      "--min-score {} is above every score of the {} title(s) (the highest {:.6g}), so all abstained; "
      "calibrated scores can stop short of 1: `newscls eval --min-score S` on dev gives a threshold's coverage",
      min_score, scored_, top_);
}

}  // namespace newscls
