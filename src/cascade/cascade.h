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

#include "newscls/core/classifier.h"
#include "newscls/core/family.h"

namespace newscls::cascade {

const Family& family();
nlohmann::json default_config();
std::unique_ptr<Classifier> make_classifier();
// Waits for a loaded cascade's members still loading in the background; rethrows their errors.
void load_every_member(Classifier& cascade);
// Empty when the config names members; else how to name them.
std::string unavailable_reason(const nlohmann::json& config);
// "a,b,c" -> {"a", "b", "c"} (empty items dropped).
std::vector<std::string> split_members(const std::string& list);
// list with its members replaced, in order, by bundles; empty items are kept, for train to refuse.
std::string replace_members(const std::string& list, const std::vector<std::string>& bundles);

// One member's calibrated dev answers: top score and whether the answer the cascade would give
// when this member answers (its own, or with combine=product the joint one) was right.
struct MemberAnswers {
  std::vector<float> scores;
  std::vector<char> correct;
  std::size_t alone_correct = 0;  // titles this member gets right on its own
};

struct ThresholdChoice {
  std::vector<double> thresholds;  // one per member but the last
  std::size_t correct = 0;
  std::vector<std::size_t> answered;  // per member
};

// Among the thresholds with at most max_last_share of the titles reaching the last member and
// a dev accuracy within `slack` (a share of the titles) of the best of them: the fewest titles
// sent on, then the most accurate. slack 0: the best dev accuracy. Candidates: 0, the
// `candidates` quantiles of each member's scores, and "never answer" (above 1). A negative
// score (an unknown answer) is sent on under every candidate.
ThresholdChoice choose_thresholds(const std::vector<MemberAnswers>& members, double max_last_share, int candidates = 40,
                                  double slack = 0.0);

// combine=product: a title sent on is answered by the product of the calibrated probabilities
// of every member that saw it (renormalised), so the cheap member's doubt between two classes
// still counts when the later member is sure of a third. joint *= probs, renormalised; an
// empty probs (an unknown answer) leaves joint as it is; an empty joint becomes probs.
void multiply_into(std::vector<float>& joint, const std::vector<float>& probs);

}  // namespace newscls::cascade
