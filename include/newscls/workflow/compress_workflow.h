// `newscls compress`: a trained bundle made smaller or faster by its family (Family::compress:
// pruning, quantisation, distillation, ...), then measured beside the original in one run and
// written to <out>/compression.json: parameters, bundle MB (payload bytes), dev and test
// accuracy and macro-F1, and `predict` titles/s on the same dev titles (predict_titles in this
// process, the two bundles alternated, best of `speed_rounds`; start-up excluded). The new
// bundle is calibrated on dev like a trained one, and gets metrics.json on test.
//
//   CompressRequest o; o.method = "quantize"; o.model_dir = "runs/bert"; o.out_dir = "runs/bert-int8";
//   nlohmann::json report = run_compress(o);   // also in runs/bert-int8/compression.json
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace newscls {

struct CompressRequest {
  std::string method, model_dir, out_dir, data_dir;
  std::vector<std::string> overrides;     // the method's settings, key=value
  std::vector<std::string> teacher_dirs;  // soft-label teachers; empty = model_dir alone
  std::string unlabelled_file;            // extra titles, one per line
  std::uint64_t seed = 1;
  int threads = 1;  // resolved (>= 1): the app turns --threads 0 into the core count
  bool skip_bad_lines = false;
  std::size_t speed_titles = 0;  // titles/s measured on the first N dev titles; 0 = all
  int speed_rounds = 2;
};

nlohmann::json run_compress(const CompressRequest& options);

// The averaged probabilities of the teachers' (calibrated) predictions, one row per title;
// weighted by `weights` (one per teacher, summing to 1) when given, else equally.
std::vector<std::vector<float>> teacher_probabilities(const std::vector<std::string>& teacher_dirs,
                                                      const std::vector<std::string>& titles, int threads,
                                                      const std::vector<double>& weights = {});

// --set teacher_weights=auto: the weights (on the simplex grid of step 1/parts) whose average
// of probs[teacher][title] has the best accuracy on gold; equal weights win ties.
std::vector<double> choose_teacher_weights(const std::vector<std::vector<std::vector<float>>>& probs,
                                           const std::vector<int>& gold, int parts);

}  // namespace newscls
