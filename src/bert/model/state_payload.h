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
#include "newscls/core/bundle.h"

namespace newscls::bert {

// An int8 bundle's weights payload (made by `newscls compress --method quantize`), in place of
// weights.bin.
constexpr const char* kInt8Payload = "weights.int8.bin";
constexpr std::uint32_t kInt8PayloadVersion = 1;

bool has_int8_weights(const Bundle& bundle);
// Pruning and distillation start from float weights: an int8 bundle is a UsageError saying so
// ("lists no payload 'weights.bin'" said nothing).
void refuse_int8_source(const Bundle& bundle);

struct TensorSpec {
  std::string name;
  std::vector<std::int64_t> shape;
};

struct NamedArray {
  std::string name;
  std::vector<std::int64_t> shape;
  std::vector<float> values;      // f32; empty where read as int8 rows (dequantized() gives them)
  std::vector<std::int8_t> int8;  // row-major int8 values; empty when stored as f32
  std::vector<float> scales;      // per row (shape[0]) when int8
};

// a's values in f32: its values, or its int8 rows times their scales (as LibTorch dequantises).
std::vector<float> dequantized(const NamedArray& a);

// The LibTorch ClassifierModel's named_state (parameters in registration order) for this
// architecture; num_classes 0: no classifier.
std::vector<TensorSpec> expected_state(const Architecture& arch, std::int64_t num_classes);

std::vector<NamedArray> read_float_state(const std::string& path, const std::vector<TensorSpec>& specs);

struct Int8State {
  std::string engine;
  std::vector<NamedArray> tensors;
};
// Tensors stored as int8 rows keep them (int8, scales) and no f32 values: the runtime reads
// its embedding tables row by row and its Linears run int8, so nothing is dequantised whole.
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
