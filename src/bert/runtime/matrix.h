// A row-major float matrix: the one tensor type of the inference runtime. A batch of titles
// padded to T positions is (B*T) x hidden, title b's position t at row b*T + t.
//
//   Matrix x(rows, hidden);          // zeros
//   float* r = x.row(3);
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace newscls::bert::runtime {

struct Matrix {
  std::int64_t rows = 0, cols = 0;
  std::vector<float> values;

  Matrix() = default;
  Matrix(std::int64_t r, std::int64_t c) : rows(r), cols(c), values(static_cast<std::size_t>(r * c), 0.0f) {}
  float* row(std::int64_t r) { return values.data() + r * cols; }
  const float* row(std::int64_t r) const { return values.data() + r * cols; }
};

}  // namespace newscls::bert::runtime
