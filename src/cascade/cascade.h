// The cascade family: a chain of trained bundles (e.g. fasttext -> bert -> llm) copied into one
// self-contained bundle. A title is answered by the first member whose calibrated top score
// reaches that member's threshold (the last member answers the rest). Thresholds are chosen
// on dev: the best dev accuracy, optionally with at most `last_share` of the titles reaching
// the last member (the LLM's calls are what cost).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "newscls/classifier.h"
#include "newscls/family.h"

namespace newscls::cascade {

const Family& family();
nlohmann::json default_config();
std::unique_ptr<Classifier> make_classifier();
// Empty when the config names members; else how to name them.
std::string unavailable_reason(const nlohmann::json& config);

// One member's calibrated dev answers: top score and whether it was right.
struct MemberAnswers {
  std::vector<float> scores;
  std::vector<char> correct;
};

struct ThresholdChoice {
  std::vector<double> thresholds;      // one per member but the last
  std::size_t correct = 0;
  std::vector<std::size_t> answered;   // per member
};

// The thresholds of best dev accuracy with at most max_last_share of the titles reaching the
// last member; among equal accuracy, the fewest titles sent on. Candidates: 0, the
// `candidates` quantiles of each member's scores, and "never answer" (above 1).
ThresholdChoice choose_thresholds(const std::vector<MemberAnswers>& members, double max_last_share,
                                  int candidates = 40);

}  // namespace newscls::cascade
