#include "bert/tokens/batching.h"

#include <algorithm>

#include "bert/tokens/vocab.h"

namespace newscls::bert {
Batch make_batch(const std::vector<std::vector<std::int64_t>>& encoded, const std::vector<std::size_t>& rows,
                 const std::vector<int>* labels) {
  std::size_t t = 1;
  for (std::size_t r : rows) t = std::max(t, encoded[r].size());
  const auto b = static_cast<std::int64_t>(rows.size());
  Batch batch;
  batch.rows = rows;
  batch.ids = torch::full({b, static_cast<std::int64_t>(t)}, kPad, torch::kInt64);
  batch.key_valid = torch::zeros({b, static_cast<std::int64_t>(t)}, torch::kBool);
  auto ids = batch.ids.accessor<std::int64_t, 2>();
  auto valid = batch.key_valid.accessor<bool, 2>();
  for (std::int64_t i = 0; i < b; ++i) {
    const auto& e = encoded[rows[i]];
    for (std::size_t j = 0; j < e.size(); ++j) {
      ids[i][j] = e[j];
      valid[i][j] = true;
    }
  }
  if (labels != nullptr) {
    batch.labels = torch::empty({b}, torch::kInt64);
    for (std::int64_t i = 0; i < b; ++i) batch.labels[i] = (*labels)[rows[i]];
  }
  return batch;
}

std::vector<std::int64_t> join_same_label(const std::vector<std::vector<std::int64_t>>& encoded, std::size_t row,
                                          const std::vector<std::vector<std::size_t>>& by_label,
                                          const std::vector<int>& labels, double join_prob, std::int64_t max_len,
                                          std::mt19937_64& rng) {
  std::vector<std::int64_t> ids = encoded[row];
  const bool labelled = labels[row] >= 0 && static_cast<std::size_t>(labels[row]) < by_label.size();
  if (!labelled || std::uniform_real_distribution<double>(0.0, 1.0)(rng) >= join_prob) return ids;
  const auto& same = by_label[static_cast<std::size_t>(labels[row])];
  if (same.empty()) return ids;
  const auto& other = encoded[same[std::uniform_int_distribution<std::size_t>(0, same.size() - 1)(rng)]];
  ids.insert(ids.end(), other.begin() + 1, other.end());  // other without its [CLS]
  const auto cap = static_cast<std::size_t>(std::max<std::int64_t>(max_len, 3));
  if (ids.size() > cap) {
    const std::int64_t sep = ids.back();  // the tokenizer's own [SEP] (WordPiece's is not kSep)
    ids.resize(cap);
    ids.back() = sep;
  }
  return ids;
}

}  // namespace newscls::bert
