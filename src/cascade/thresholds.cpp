#include <algorithm>
#include <cstdio>
#include <set>

#include "cascade/cascade.h"
#include "newscls/core/error.h"

namespace newscls::cascade {
namespace {

std::vector<double> candidate_thresholds(const std::vector<float>& scores, int candidates) {
  std::set<double> out{0.0, 1.5};  // answer every known answer; answer nothing
  std::vector<float> sorted = scores;
  std::sort(sorted.begin(), sorted.end());
  // Unknown answers score below 0 and are always sent on: no candidate may answer them.
  for (int q = 1; q < candidates && !sorted.empty(); ++q)
    out.insert(std::max(0.0f, sorted[sorted.size() * q / candidates]));
  return {out.begin(), out.end()};
}

// A later member sees only the titles the earlier ones send on, where its scores run lower than
// over all titles: its candidates also come from the titles every earlier member is unsure of
// (scored below its median), where the quantiles of all titles, mostly near 1, are sparse.
std::vector<double> later_member_thresholds(const std::vector<MemberAnswers>& members, std::size_t m, int candidates) {
  std::vector<double> all = candidate_thresholds(members[m].scores, candidates);
  if (members[m].scores.empty()) return all;
  std::vector<float> unsure;
  std::vector<float> medians;
  for (std::size_t e = 0; e < m; ++e) {
    std::vector<float> sorted = members[e].scores;
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2), sorted.end());
    medians.push_back(sorted[sorted.size() / 2]);
  }
  for (std::size_t i = 0; i < members[m].scores.size(); ++i) {
    bool sent_on = true;
    for (std::size_t e = 0; e < m && sent_on; ++e) sent_on = members[e].scores[i] < medians[e];
    if (sent_on) unsure.push_back(members[m].scores[i]);
  }
  const std::vector<double> more = candidate_thresholds(unsure, candidates);
  std::set<double> merged(all.begin(), all.end());
  merged.insert(more.begin(), more.end());
  return {merged.begin(), merged.end()};
}

// Routes every dev title under `thresholds`; fills correct and answered.
void route(const std::vector<MemberAnswers>& members, ThresholdChoice& c) {
  const std::size_t n = members[0].scores.size();
  c.correct = 0;
  c.answered.assign(members.size(), 0);
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t m = 0;
    while (m + 1 < members.size() && members[m].scores[i] < c.thresholds[m]) ++m;
    ++c.answered[m];
    c.correct += members[m].correct[i] ? 1 : 0;
  }
}

// Fewer titles sent on (weighted towards the later, costlier members) is better.
std::size_t sent_on(const ThresholdChoice& c) {
  std::size_t cost = 0;
  for (std::size_t m = 1; m < c.answered.size(); ++m) cost += c.answered[m] * m;
  return cost;
}

}  // namespace

ThresholdChoice choose_thresholds(const std::vector<MemberAnswers>& members, double max_last_share, int candidates,
                                  double slack) {
  if (members.size() < 2) throw UsageError("a cascade needs at least two members");
  const std::size_t n = members[0].scores.size();
  for (const MemberAnswers& m : members) {
    if (m.scores.size() != n || m.correct.size() != n)
      throw Error(ErrorKind::kData, "cascade: members answered different titles");
  }
  std::vector<std::vector<double>> grid;
  for (std::size_t m = 0; m + 1 < members.size(); ++m) {
    grid.push_back(m == 0 ? candidate_thresholds(members[m].scores, candidates)
                          : later_member_thresholds(members, m, candidates));
  }
  std::vector<ThresholdChoice> allowed;
  std::size_t least_last = n;  // the fewest titles any thresholds send to the last member
  ThresholdChoice trial;
  std::vector<std::size_t> pick(grid.size(), 0);
  for (;;) {  // every combination of the candidates (2 or 3 members: small)
    trial.thresholds.clear();
    for (std::size_t m = 0; m < grid.size(); ++m) trial.thresholds.push_back(grid[m][pick[m]]);
    route(members, trial);
    least_last = std::min(least_last, trial.answered.back());
    if (double(trial.answered.back()) <= max_last_share * double(n) + 1e-9) allowed.push_back(trial);
    std::size_t m = 0;
    while (m < pick.size() && ++pick[m] == grid[m].size()) pick[m++] = 0;
    if (m == pick.size()) break;
  }
  if (allowed.empty()) {
    char least[32];
    std::snprintf(least, sizeof least, "%.4f", double(least_last) / double(std::max<std::size_t>(1, n)));
    throw ConfigError("last_share", nlohmann::json(max_last_share).dump() +
                                        " is below the smallest share of dev titles that reach the last member, " +
                                        least + " (an earlier member's 'unknown' answers always go on)");
  }
  std::size_t most = 0;
  for (const ThresholdChoice& c : allowed) most = std::max(most, c.correct);
  // Within `slack` of the best accuracy, the fewest titles sent on; then the most accurate.
  const double enough = double(most) - slack * double(n) - 1e-9;
  const ThresholdChoice* best = nullptr;
  for (const ThresholdChoice& c : allowed) {
    if (double(c.correct) < enough) continue;
    if (best == nullptr || sent_on(c) < sent_on(*best) || (sent_on(c) == sent_on(*best) && c.correct > best->correct)) {
      best = &c;
    }
  }
  return *best;
}

void multiply_into(std::vector<float>& joint, const std::vector<float>& probs) {
  if (probs.empty()) return;  // an unknown answer adds nothing
  if (joint.size() != probs.size()) {
    joint = probs;
    return;
  }
  double sum = 0;
  for (std::size_t k = 0; k < joint.size(); ++k) sum += joint[k] *= probs[k];
  if (sum <= 0) {
    joint = probs;  // the members exclude each other's every class: trust the later one
    return;
  }
  for (float& x : joint) x = static_cast<float>(x / sum);
}

}  // namespace newscls::cascade
