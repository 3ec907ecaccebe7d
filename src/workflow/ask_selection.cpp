#include "workflow/ask_selection.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <numeric>

#include "newscls/core/splitmix.h"
#include "newscls/core/utf8.h"

namespace newscls {
namespace {

using Bigrams = std::vector<std::uint64_t>;  // sorted, distinct

Bigrams bigrams_of(const std::string& title) {
  const std::u32string chars = decode_utf8(title);
  Bigrams out;
  if (chars.size() == 1) out.push_back(chars[0]);
  for (std::size_t i = 0; i + 1 < chars.size(); ++i) {
    out.push_back(static_cast<std::uint64_t>(chars[i]) << 32 | chars[i + 1]);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

double jaccard(const Bigrams& a, const Bigrams& b) {
  if (a.empty() && b.empty()) return 1;
  std::size_t common = 0;
  for (auto i = a.begin(), j = b.begin(); i != a.end() && j != b.end();) {
    if (*i < *j) {
      ++i;
    } else if (*j < *i) {
      ++j;
    } else {
      ++common, ++i, ++j;
    }
  }
  return static_cast<double>(common) / static_cast<double>(a.size() + b.size() - common);
}

int top_class(const std::vector<float>& probs) {
  return static_cast<int>(std::max_element(probs.begin(), probs.end()) - probs.begin());
}

bool by_score(const AskPick& a, const AskPick& b) {
  return a.score > b.score || (a.score == b.score && a.index < b.index);
}

// Each predicted class's titles, best score first.
std::map<int, std::vector<AskPick>> scored_by_class(const std::vector<std::vector<float>>& probs) {
  std::map<int, std::vector<AskPick>> by_class;
  for (std::size_t i = 0; i < probs.size(); ++i) {
    if (probs[i].empty()) continue;
    const int top = top_class(probs[i]);
    by_class[top].push_back({i, top, boundary_score(probs[i])});
  }
  for (auto& [c, picks] : by_class) std::sort(picks.begin(), picks.end(), by_score);
  return by_class;
}

}  // namespace

double boundary_score(const std::vector<float>& probs) {
  if (probs.empty()) return 0;
  float p1 = 0, p2 = 0;
  for (float p : probs) {
    if (p > p1) {
      p2 = p1, p1 = p;
    } else if (p > p2) {
      p2 = p;
    }
  }
  return static_cast<double>(p1 + p2) * (1.0 - static_cast<double>(p1 - p2));
}

double bigram_overlap(const std::string& a, const std::string& b) { return jaccard(bigrams_of(a), bigrams_of(b)); }

std::vector<AskPick> pick_active(const std::vector<std::string>& titles, const std::vector<std::vector<float>>& probs,
                                 std::size_t budget) {
  std::map<int, std::vector<AskPick>> by_class = scored_by_class(probs);
  std::vector<AskPick> picked, passed_over;
  std::vector<Bigrams> picked_bigrams;
  std::map<int, std::size_t> next;  // each class's next title to consider
  // Classes in turn, each its best title left that is no near-duplicate of a picked one.
  for (bool progress = true; progress && picked.size() < budget;) {
    progress = false;
    for (auto& [c, picks] : by_class) {
      for (std::size_t& k = next[c]; k < picks.size() && picked.size() < budget;) {
        const AskPick& candidate = picks[k++];
        Bigrams bigrams = bigrams_of(titles[candidate.index]);
        const bool near = std::any_of(picked_bigrams.begin(), picked_bigrams.end(),
                                      [&](const Bigrams& p) { return jaccard(p, bigrams) >= kNearDuplicate; });
        if (near) {
          passed_over.push_back(candidate);
          continue;
        }
        picked.push_back(candidate);
        picked_bigrams.push_back(std::move(bigrams));
        progress = true;
        break;
      }
    }
  }
  // A feed of near-duplicates: the budget is still spent, on the best of those passed over.
  std::sort(passed_over.begin(), passed_over.end(), by_score);
  for (std::size_t k = 0; k < passed_over.size() && picked.size() < budget; ++k) picked.push_back(passed_over[k]);
  std::sort(picked.begin(), picked.end(), by_score);
  return picked;
}

std::vector<AskPick> pick_random(const std::vector<std::vector<float>>& probs, std::size_t budget, std::uint64_t seed) {
  std::vector<std::size_t> order(probs.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::uint64_t state = seed;
  std::vector<AskPick> picked;
  // Fisher-Yates, stopped after budget draws (splitmix: the same draw on every platform).
  for (std::size_t k = 0; k < order.size() && picked.size() < budget; ++k) {
    std::swap(order[k], order[k + splitmix64(state) % (order.size() - k)]);
    const std::vector<float>& p = probs[order[k]];
    picked.push_back(
        {order[k], p.empty() ? -1 : top_class(p), p.empty() ? 0.0 : *std::max_element(p.begin(), p.end())});
  }
  return picked;
}

}  // namespace newscls
