// Which feed titles `newscls ask` asks the reader to label: the pure choice, from the model's
// probabilities (src/workflow/ask_workflow.cpp reads the feed and writes the CSV).
//
// active: most of a real feed fits none of the classes, and the plain smallest-margin rule
// spends the budget on those (a flat distribution has a small margin too), doing no better than
// a random draw. So a title's score is the model's doubt between its top two classes, weighed by
// how much of its probability those two hold:
//     score = (p1 + p2) * (1 - (p1 - p2))
// high for a title torn between two classes (0.5 / 0.45: 0.90), low for a confident one
// (0.98 / 0.01: 0.03) and for one that fits nothing the model knows (0.2 / 0.15: 0.33). For
// diversity, the picks are spread evenly over the predicted classes (each class in turn gives
// its best-scored title left), and a title whose character bigrams overlap a picked one's by
// kNearDuplicate or more (a reprint, a title with one word changed) is passed over.
// random: a seeded uniform draw, for comparison.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace newscls {

struct AskPick {
  std::size_t index = 0;  // into the titles given
  int suggested = -1;     // the model's top class (-1: no probabilities)
  double score = 0;       // the active score (random: the top probability)
};

// Jaccard overlap of two titles' character-bigram sets at or above which they count as one.
constexpr double kNearDuplicate = 0.6;

// (p1 + p2) * (1 - (p1 - p2)) of the two largest probabilities; 0 for no probabilities.
double boundary_score(const std::vector<float>& probs);

// Character-bigram Jaccard overlap of two UTF-8 titles (1 for two identical titles).
double bigram_overlap(const std::string& a, const std::string& b);

// budget picks (fewer when the titles run out), highest score first; probs[i] belongs to
// titles[i] (empty: the model gave none, never picked).
std::vector<AskPick> pick_active(const std::vector<std::string>& titles, const std::vector<std::vector<float>>& probs,
                                 std::size_t budget);

// budget titles drawn uniformly with the seed, in the order drawn.
std::vector<AskPick> pick_random(const std::vector<std::vector<float>>& probs, std::size_t budget, std::uint64_t seed);

}  // namespace newscls
