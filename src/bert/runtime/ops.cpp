#include "bert/runtime/ops.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <cblas.h>

#include "newscls/core/error.h"

namespace newscls::bert::runtime {

Matrix Linear::apply(const Matrix& x) const {
  if (x.cols != in) throw UsageError("a linear layer's input has the wrong width");
  Matrix y(x.rows, out);
  if (x.rows == 0) return y;
  if (int8) {
    int8->forward(x.values.data(), x.rows, y.values.data());
    return y;
  }
  // As LibTorch's addmm: the bias in the output, then y += x W^T.
  for (std::int64_t r = 0; r < x.rows; ++r) std::copy(bias.begin(), bias.end(), y.row(r));
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(x.rows), static_cast<int>(out),
              static_cast<int>(in), 1.0f, x.values.data(), static_cast<int>(in), weight.data(), static_cast<int>(in),
              1.0f, y.values.data(), static_cast<int>(out));
  return y;
}

Linear make_linear(const NamedArray& weight, const NamedArray& bias) {
  Linear l;
  l.out = weight.shape.at(0);
  l.in = weight.shape.at(1);
  l.bias = dequantized(bias);
  if (!weight.int8.empty()) {
    l.int8 = std::make_shared<Int8Matmul>(weight.int8.data(), weight.scales.data(), l.bias, l.out, l.in);
  } else {
    l.weight = weight.values;
  }
  return l;
}

Linear stack_linears(const std::vector<const Linear*>& parts, const std::vector<const NamedArray*>& int8_weights) {
  Linear l;
  l.in = parts.at(0)->in;
  std::vector<std::int8_t> values;
  std::vector<float> scales;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    l.out += parts[i]->out;
    l.weight.insert(l.weight.end(), parts[i]->weight.begin(), parts[i]->weight.end());
    l.bias.insert(l.bias.end(), parts[i]->bias.begin(), parts[i]->bias.end());
    if (!int8_weights.empty()) {
      values.insert(values.end(), int8_weights[i]->int8.begin(), int8_weights[i]->int8.end());
      scales.insert(scales.end(), int8_weights[i]->scales.begin(), int8_weights[i]->scales.end());
    }
  }
  if (!int8_weights.empty()) l.int8 = std::make_shared<Int8Matmul>(values.data(), scales.data(), l.bias, l.out, l.in);
  return l;
}

void layer_norm(Matrix& x, const Norm& norm, double eps) {
  const std::int64_t n = x.cols;
  for (std::int64_t r = 0; r < x.rows; ++r) {
    float* row = x.row(r);
    double sum = 0;
    for (std::int64_t c = 0; c < n; ++c) sum += row[c];
    const double mean = sum / static_cast<double>(n);
    double var = 0;
    for (std::int64_t c = 0; c < n; ++c) var += (row[c] - mean) * (row[c] - mean);
    const double rstd = 1.0 / std::sqrt(var / static_cast<double>(n) + eps);
    for (std::int64_t c = 0; c < n; ++c) {
      const auto i = static_cast<std::size_t>(c);
      row[c] = static_cast<float>((row[c] - mean) * rstd) * norm.gamma[i] + norm.beta[i];
    }
  }
}

void gelu(Matrix& x) {
  // torch::gelu's default (approximate "none"): x/2 (1 + erf(x / sqrt 2)).
  for (float& v : x.values) v = 0.5f * v * (1.0f + std::erf(v * static_cast<float>(M_SQRT1_2)));
}

void tanh_in_place(Matrix& x) {
  for (float& v : x.values) v = std::tanh(v);
}

void softmax_rows(Matrix& x) {
  for (std::int64_t r = 0; r < x.rows; ++r) {
    float* row = x.row(r);
    const float top = *std::max_element(row, row + x.cols);
    float sum = 0;
    for (std::int64_t c = 0; c < x.cols; ++c) sum += row[c] = std::exp(row[c] - top);
    for (std::int64_t c = 0; c < x.cols; ++c) row[c] /= sum;
  }
}

namespace {

// Masked softmax of one query's scores over the T keys, in place: padded keys get 0; a title
// without any real key gets 0 everywhere.
void masked_softmax(float* w, const std::uint8_t* valid, std::int64_t t, bool any) {
  if (!any) {
    std::fill(w, w + t, 0.0f);
    return;
  }
  float top = -std::numeric_limits<float>::infinity();
  for (std::int64_t j = 0; j < t; ++j) {
    if (valid[j] != 0) top = std::max(top, w[j]);
  }
  float sum = 0;
  for (std::int64_t j = 0; j < t; ++j) sum += w[j] = valid[j] != 0 ? std::exp(w[j] - top) : 0.0f;
  for (std::int64_t j = 0; j < t; ++j) w[j] /= sum;
}

}  // namespace

Matrix attend(const Matrix& q, const Matrix& k, const Matrix& v, const PaddedBatch& batch, std::int64_t heads,
              std::int64_t t_q, Matrix* weights) {
  const std::int64_t b_n = batch.size, t = batch.length, width = q.cols, d = width / heads;
  const auto inv_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  Matrix context(b_n * t_q, width);
  Matrix scratch(t_q, t);
  if (weights != nullptr) *weights = Matrix(b_n * heads * t_q, t);
  const auto ld = [](const Matrix& m) { return static_cast<int>(m.cols); };
  for (std::int64_t b = 0; b < b_n; ++b) {
    const std::uint8_t* valid = batch.valid.data() + b * t;
    const bool any = std::any_of(valid, valid + t, [](std::uint8_t x) { return x != 0; });
    for (std::int64_t h = 0; h < heads; ++h) {
      float* w = weights != nullptr ? weights->row((b * heads + h) * t_q) : scratch.values.data();
      // scores = Q K^T / sqrt(d) for this title and head, read in place through the row strides.
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(t_q), static_cast<int>(t),
                  static_cast<int>(d), inv_scale, q.row(b * t_q) + h * d, ld(q), k.row(b * t) + h * d, ld(k), 0.0f, w,
                  static_cast<int>(t));
      for (std::int64_t i = 0; i < t_q; ++i) masked_softmax(w + i * t, valid, t, any);
      // context = A V, written into this head's columns.
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(t_q), static_cast<int>(d),
                  static_cast<int>(t), 1.0f, w, static_cast<int>(t), v.row(b * t) + h * d, ld(v), 0.0f,
                  context.row(b * t_q) + h * d, ld(context));
    }
  }
  return context;
}

}  // namespace newscls::bert::runtime
