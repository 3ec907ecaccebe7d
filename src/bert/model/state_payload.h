// A bert classifier's weights read straight from its bundle payloads, without LibTorch: the
// float payload (model/tensor_io.h, "NCBW") or the int8 one (model/int8_payload.h, "NCQ8").
// The tensors must be exactly those the LibTorch model has (expected_state: the same names in
// the same order, the same shapes), checked with the same errors as the LibTorch loaders give.
//
//   std::vector<TensorSpec> specs = expected_state(arch, num_classes);
//   std::vector<NamedArray> state = read_float_state(path, specs);
//   Int8State q = read_int8_state(path, specs);   // q.engine, q.tensors (int8 rows kept)
//   write_float_state(path, state);                // as model/tensor_io.h's save_tensors
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bert/model/architecture.h"

namespace newscls::bert {

struct TensorSpec {
  std::string name;
  std::vector<std::int64_t> shape;
};

struct NamedArray {
  std::string name;
  std::vector<std::int64_t> shape;
  std::vector<float> values;        // f32, the int8 rows dequantised where stored so
  std::vector<std::int8_t> int8;    // row-major int8 values; empty when stored as f32
  std::vector<float> scales;        // per row (shape[0]) when int8
};

// The LibTorch ClassifierModel's named_state (parameters in registration order) for this
// architecture; num_classes 0: no classifier.
std::vector<TensorSpec> expected_state(const Architecture& arch, std::int64_t num_classes);

std::vector<NamedArray> read_float_state(const std::string& path, const std::vector<TensorSpec>& specs);

struct Int8State {
  std::string engine;
  std::vector<NamedArray> tensors;
};
Int8State read_int8_state(const std::string& path, const std::vector<TensorSpec>& specs);

// The same payloads written back: every tensor as f32 (its values), or, int8, each tensor that
// has int8 rows as those rows (unchanged: a loaded int8 bundle saves as it was read) and the
// rest as f32.
void write_float_state(const std::string& path, const std::vector<NamedArray>& state);
// Rounds a's values to int8 rows as kernels/int8_rows.h's quantize_rows does (symmetric per
// row: scale = max|row| / 127, an all-zero row scale 1): sets a.int8 and a.scales, keeps a.values.
void quantize_array_rows(NamedArray& a);
void write_int8_state(const std::string& path, const Int8State& state);

}  // namespace newscls::bert
