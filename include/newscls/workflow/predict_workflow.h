// `newscls predict`: titles in, one JSONL or TSV line out per title, streamed.
//
//   PredictRequest req; req.model_dir = "runs/fasttext";
//   std::size_t n = run_predict(req);
#pragma once

#include <cstddef>
#include <string>

#include "newscls/workflow/predict_output.h"

namespace newscls {

struct PredictRequest {
  std::string model_dir, input = "-", output = "-";  // "-" = stdin, stdout
  PredictionFormat format = PredictionFormat::kJsonl;
  int top_k = 3;
  int threads = 1;        // resolved (>= 1): the app turns --threads 0 into the core count
  double min_score = -1;  // >= 0: abstain below this calibrated top score
};

// Returns the number of titles predicted.
std::size_t run_predict(const PredictRequest& request);

}  // namespace newscls
