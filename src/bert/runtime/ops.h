// The inference runtime's kernels on row-major floats, each the LibTorch op the training
// encoder runs (model/encoder.cpp, model/attention.cpp), computed without LibTorch: Linear
// (OpenBLAS's sgemm, or the int8 GEMM of an int8 bundle), LayerNorm, exact (erf) GELU, tanh,
// row softmax, and masked multi-head attention over padded titles.
//
//   Linear fc = make_linear(weight, bias);     // NamedArrays (out x in, out)
//   Matrix y = fc.apply(x);                    // x rows x in -> rows x out
//   layer_norm(y, norm, eps);
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "bert/kernels/int8_matmul.h"
#include "bert/runtime/matrix.h"
#include "bert/model/state_payload.h"

namespace newscls::bert::runtime {

// y = x W^T + b; W (out x in) in f32, or as int8 rows run by the int8 GEMM when int8 is set
// (weight then empty).
struct Linear {
  std::int64_t out = 0, in = 0;
  std::vector<float> weight, bias;
  std::shared_ptr<const Int8Matmul> int8;

  Matrix apply(const Matrix& x) const;
};

// From a weight and its bias; an int8-stored weight runs int8 (as the LibTorch twins do).
Linear make_linear(const NamedArray& weight, const NamedArray& bias);
// Several Linears of one input as one (their rows stacked, outputs concatenated): the same
// outputs, one GEMM (and, int8, one quantisation of the input) instead of several.
Linear stack_linears(const std::vector<const Linear*>& parts, const std::vector<const NamedArray*>& int8_weights);

struct Norm {
  std::vector<float> gamma, beta;
};

void layer_norm(Matrix& x, const Norm& norm, double eps);
void gelu(Matrix& x);
void tanh_in_place(Matrix& x);
// Softmax of each row, in place.
void softmax_rows(Matrix& x);

// Padded titles: B rows of T ids (kPad past each title's end), valid[b*T + t] at real tokens.
struct PaddedBatch {
  std::int64_t size = 0, length = 0;
  std::vector<std::int64_t> ids;
  std::vector<std::uint8_t> valid;
};

// q: (B*Tq) x (heads*d), k and v: (B*T) x (heads*d), head h in columns [h*d, (h+1)*d). Tq is T,
// or 1 for the first position only. Returns the context (B*Tq) x (heads*d); weights, when
// given, receive the softmax weights (B*heads*Tq) x T (padded keys 0; a row without any real
// key is all 0, its context 0).
Matrix attend(const Matrix& q, const Matrix& k, const Matrix& v, const PaddedBatch& batch, std::int64_t heads,
              std::int64_t t_q, Matrix* weights);

}  // namespace newscls::bert::runtime
