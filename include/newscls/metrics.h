// Classification metrics: accuracy, macro and per-class precision/recall/F1, confusion.
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

#include "newscls/data.h"

namespace newscls {

constexpr int kUnknownLabel = -1;

struct ClassMetrics {
  double precision = 0, recall = 0, f1 = 0;
  std::size_t support = 0;
};

struct Metrics {
  std::vector<std::string> labels;
  std::size_t count = 0;
  double accuracy = 0;
  double macro_precision = 0, macro_recall = 0, macro_f1 = 0;
  std::vector<ClassMetrics> per_class;
  // rows = true label, columns = predicted label; one extra column counts unknown replies.
  std::vector<std::vector<std::size_t>> confusion;
  std::size_t unknown = 0;
  double wall_seconds = 0;
  double titles_per_second = 0;
};

Metrics compute_metrics(const std::vector<int>& truth, const std::vector<int>& predicted,
                        const LabelSet& labels);
nlohmann::json to_json(const Metrics& m);
std::string format_metrics_table(const Metrics& m);

}  // namespace newscls
