// Classification metrics: accuracy, macro and per-class precision/recall/F1, confusion; and
// the quality of the scores: calibration (ECE, NLL, Brier, reliability bins) and selective
// prediction (accuracy of the titles answered at a score threshold, risk-coverage curve).
//
// A prediction of kUnknownLabel (a reply that maps to no class, from the LLM stage) is
// counted as wrong and lands in an extra last column of the confusion matrix.
//
//   Metrics m = compute_metrics(truth, predicted, labels);
//   m.wall_seconds = ...; std::cout << format_metrics_table(m);
//   nlohmann::json j = to_json(m);
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "newscls/core/data.h"

namespace newscls {

constexpr int kUnknownLabel = -1;

struct ClassMetrics {
  double precision = 0, recall = 0, f1 = 0;
  std::size_t support = 0;
  std::size_t predicted = 0;  // titles given this class
};

// One equal-width bin of top scores: how sure the model said it was, how often it was right.
struct ReliabilityBin {
  double lower = 0, upper = 0;
  std::size_t count = 0;
  double mean_confidence = 0, accuracy = 0;
};

// count == 0 means no probabilities were available (nothing to report).
struct CalibrationMetrics {
  std::size_t count = 0;
  double ece = 0;    // sum over bins of (bin share) * |accuracy - mean confidence|
  double nll = 0;    // mean -log p(true class), p floored at kNllFloor
  double brier = 0;  // mean over titles of the sum over classes of (p - onehot)^2
  std::vector<ReliabilityBin> bins;
};

constexpr double kNllFloor = 1e-12;
constexpr int kEceBins = 15;

// probs[i] holds one probability per class for title i; an empty vector (an answer that maps to no
// class) counts as confidence 0, wrong, p(true) = kNllFloor and Brier 1.
CalibrationMetrics compute_calibration(const std::vector<int>& truth, const std::vector<std::vector<float>>& probs,
                                       int bins = kEceBins);

// A score as predict and serve print it (6 significant digits); what --min-score compares, so
// a title shown with score 1 is never refused at --min-score 1.
double printed_score(float score);
// Whether a score falls below a --min-score bar (as printed; a NaN score always does).
bool below_min_score(float score, double min_score);

// Selective prediction: titles whose score is below min_score (below_min_score), or answered
// kUnknownLabel, are not answered.
struct SelectiveMetrics {
  double min_score = 0;
  std::size_t answered = 0, count = 0;
  double coverage = 0;           // answered / count
  double accuracy_answered = 0;  // 0 when none answered
};
SelectiveMetrics compute_selective(const std::vector<int>& truth, const std::vector<int>& predicted,
                                   const std::vector<float>& scores, double min_score);

// Accuracy of the most confident titles at `points` evenly spaced coverages (1/points .. 1 of
// the titles given a class; coverage is of all titles, so kUnknownLabel answers end it short of 1).
// Titles tied at a cut count by their share (expected accuracy over their orders).
struct CoveragePoint {
  double coverage = 0, accuracy = 0;
};
std::vector<CoveragePoint> risk_coverage(const std::vector<int>& truth, const std::vector<int>& predicted,
                                         const std::vector<float>& scores, int points = 20);

struct Metrics {
  std::vector<std::string> labels;
  std::size_t count = 0;
  double accuracy = 0;
  // Over the classes that occur in the truth or the predictions (as scikit-learn's default):
  // a class absent from a small or one-sided file would count as 0 and say nothing.
  double macro_precision = 0, macro_recall = 0, macro_f1 = 0;
  int macro_classes = 0;
  std::vector<ClassMetrics> per_class;
  // rows = true label, columns = predicted label; one extra column counts unknown replies.
  std::vector<std::vector<std::size_t>> confusion;
  std::size_t unknown = 0;
  double wall_seconds = 0;
  double titles_per_second = 0;
  CalibrationMetrics calibration;  // filled by the eval workflow when the model gives probabilities
};

Metrics compute_metrics(const std::vector<int>& truth, const std::vector<int>& predicted, const LabelSet& labels);
nlohmann::json to_json(const Metrics& m);
std::string format_metrics_table(const Metrics& m);

}  // namespace newscls
