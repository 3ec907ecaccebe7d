#include "fasttext/quantize.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <spdlog/spdlog.h>

namespace newscls::fasttext {
namespace {

std::vector<float> row_importance(const Engine& e) {
  const auto rows = static_cast<std::size_t>(e.rows());
  const auto labels = static_cast<std::size_t>(e.num_labels);
  std::vector<float> score(rows);
  for (std::size_t r = 0; r < rows; ++r) {
    float max = 0;
    for (std::size_t c = 0; c < labels; ++c) max = std::max(max, std::fabs(e.table[r * labels + c]));
    score[r] = max * (e.row_weights.empty() ? 1.0f : e.row_weights[r]);
  }
  return score;
}

std::vector<bool> top_rows(const std::vector<float>& score, std::size_t keep_count) {
  std::vector<std::size_t> order(score.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::nth_element(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(keep_count), order.end(),
                   [&](std::size_t a, std::size_t b) { return score[a] > score[b]; });
  std::vector<bool> keep(score.size(), false);
  for (std::size_t i = 0; i < keep_count; ++i) keep[order[i]] = true;
  return keep;
}

}  // namespace

std::size_t quantized_row_bytes(const Engine& engine) { return static_cast<std::size_t>(engine.num_labels) + 12; }

nlohmann::json quantize_engine(Engine& engine, const Settings& settings) {
  const auto rows = static_cast<std::size_t>(engine.rows());
  std::size_t keep_count = settings.quantize_keep_rows > 0 ? static_cast<std::size_t>(settings.quantize_keep_rows)
                                                           : kQuantizedTargetBytes / quantized_row_bytes(engine);
  keep_count = std::min(keep_count, rows);
  if (keep_count < rows) prune_rows(engine, top_rows(row_importance(engine), keep_count));
  quantize_table(engine);
  spdlog::info("fasttext quantize: kept {} of {} rows as int8", keep_count, rows);
  return {{"rows_before", rows},
          {"rows_kept", keep_count},
          {"estimated_payload_bytes", keep_count * quantized_row_bytes(engine)}};
}

}  // namespace newscls::fasttext
