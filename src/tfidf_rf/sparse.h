// Compressed sparse rows of float32 values with int32 column indices, the input of the
// forest. Within a row, indices are strictly increasing.
//
//   CsrMatrix m; m.cols = n_features;
//   m.append_row(row);                          // row: sorted (index, value) pairs
//   for (auto k = m.row_begin(i); k < m.row_end(i); ++k) use(m.indices[k], m.values[k]);
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace newscls::tfidf_rf {

using SparseRow = std::vector<std::pair<std::int32_t, float>>;

struct CsrMatrix {
  std::size_t cols = 0;
  std::vector<std::size_t> row_ptr{0};
  std::vector<std::int32_t> indices;
  std::vector<float> values;

  std::size_t rows() const { return row_ptr.size() - 1; }
  std::size_t nnz() const { return indices.size(); }
  std::size_t row_begin(std::size_t row) const { return row_ptr[row]; }
  std::size_t row_end(std::size_t row) const { return row_ptr[row + 1]; }

  void append_row(const SparseRow& row) {
    for (const auto& [index, value] : row) {
      indices.push_back(index);
      values.push_back(value);
    }
    row_ptr.push_back(indices.size());
  }
};

}  // namespace newscls::tfidf_rf
