// The int8 weights payload of a bert bundle (made by `newscls compress --method quantize`):
// Linear layers that run int8 GEMMs (kernels/quantized_linear.h) and tables stored as int8
// rows, in payload weights.int8.bin instead of weights.bin. Loading dequantises every int8
// tensor into the F32 model (so attention dumps, embed and every unhooked path see the same
// numbers) and attaches the int8 twins of the Linear layers.
//
// Payload "NCQ8" version 1, little-endian: str engine ("onednn"/"qnnpack"), u64 tensor count,
// then per tensor (named_state order): str name, u8 kind (0 f32, 1 int8 rows), u32 ndim, ndim
// x u64 dims, then kind 0: f32 array; kind 1: f32 array of per-row scales (dims[0]) and the
// int8 values as a byte string (u64 length + bytes, row-major).
//
//   Int8Layout layout = load_int8_weights(path, *model);      // dequantises, attaches twins
//   save_int8_weights(path, *model, layout);
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include <torch/torch.h>

#include "bert/model/state_payload.h"

namespace newscls::bert {

struct Int8Layout {
  std::string engine;                // the quantized engine the twins run on
  std::set<std::string> int8_names;  // tensors stored as int8 rows; the rest stay f32
};

void save_int8_weights(const std::string& path, const torch::nn::Module& model, const Int8Layout& layout);
// Throws ModelFormatError naming the file on a wrong magic/version, a truncated or corrupt
// payload, or tensors that do not fit the model.
Int8Layout load_int8_weights(const std::string& path, torch::nn::Module& model);

}  // namespace newscls::bert
