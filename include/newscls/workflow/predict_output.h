// The lines `newscls predict` writes for each title: JSONL
//   {"title":…,"label":…,"label_id":n,"score":p,"top_k":[{"label":…,"score":…},…]}
// or TSV `title<TAB>label<TAB>score`. Scores are printed as %.6g; an unknown answer has the
// label "unknown" and label_id -1. With a minimum score set, a title scored below it, or
// answered "unknown" (an LLM's reply naming no class), is not answered: "label":null, "label_id":-1, "abstained":true
// (TSV: an empty label), and answered lines carry "abstained":false. A blank title is never answered
// (Prediction::abstained): it is written so whatever the minimum score, with score 0 and an empty top_k. A cascade's
// answers add "stage" (the member that answered). Built by hand: a json value per field made
// formatting cost about 10% of tfidf-rf's prediction time.
//
//   PredictionFormatter f(manifest.labels, PredictionFormat::kJsonl, 3);
//   std::string out;  f.append(out, title, prediction);
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "newscls/core/classifier.h"
#include "newscls/core/metrics.h"

namespace newscls {

enum class PredictionFormat { kJsonl, kTsv };

// "jsonl" or "tsv"; UsageError otherwise.
PredictionFormat parse_prediction_format(const std::string& name);

class PredictionFormatter {
 public:
  PredictionFormatter(std::vector<std::string> labels, PredictionFormat format, int top_k);
  // Appends one line, newline included.
  void append(std::string& out, const std::string& title, const Prediction& p);
  // The JSON object of one result without the title (the shape of a server's results).
  void append_result_object(std::string& out, const Prediction& p);
  // Abstain below this score (negative: never).
  void set_min_score(double min_score) { min_score_ = min_score; }
  // Names of a cascade's stages, printed for Prediction::stage (else the stage number).
  void set_stage_names(std::vector<std::string> names) { stage_names_ = std::move(names); }

 private:
  void append_top_k(std::string& out, const Prediction& p);

  std::vector<std::string> labels_;
  std::vector<std::string> quoted_;  // labels already written as JSON strings
  PredictionFormat format_;
  int top_k_;
  std::vector<int> order_;
  double min_score_ = -1;
  std::vector<std::string> stage_names_;

  bool abstains(const Prediction& p) const {
    return p.abstained || (min_score_ >= 0 && (below_min_score(p.score, min_score_) || p.label == kUnknownLabel));
  }
};

// The names of a cascade's members, in the order Prediction::stage counts them (the
// manifest's training.stages); empty for other bundles.
std::vector<std::string> stage_names(const Manifest& manifest);

// Appends s as a JSON string, escaped as nlohmann::json::dump() does (quote, backslash and
// control characters; UTF-8 kept as is: the caller has checked it).
void append_json_string(std::string& out, std::string_view s);

// A title as one TSV field: tabs, carriage returns and newlines become spaces.
std::string tsv_field(std::string s);

}  // namespace newscls
