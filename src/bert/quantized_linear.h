// int8 inference for the bert family: per-row symmetric int8 tensors (a Linear's output
// channels, an embedding table's rows) and a Linear twin that runs the int8 GEMM of LibTorch's
// quantized engines (oneDNN, else QNNPACK; Debian's build has no FBGEMM), quantising its input
// dynamically per call (per tensor, asymmetric uint8) and adding the F32 bias.
//
//   Int8Rows q = quantize_rows(weight);                 // q.values int8, q.scales f32 (rows)
//   attach_int8_linears(*model, q8_of_each_linear);     // Linear -> child "int8"
//   torch::Tensor y = run_linear(layer, x);             // the int8 twin when attached
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <torch/torch.h>

namespace newscls::bert {

struct Int8Rows {
  torch::Tensor values;  // int8, the tensor's shape
  torch::Tensor scales;  // f32 (rows,): row r is values[r] * scales[r]
};

// Symmetric per-row: scale = max|row| / 127 (an all-zero row gets scale 1 and zeros).
Int8Rows quantize_rows(const torch::Tensor& weight);
torch::Tensor dequantize_rows(const Int8Rows& q);

// The quantized engine int8 GEMMs run on: "onednn" or "qnnpack"; throws UsageError naming
// the setting when this LibTorch lacks it.
void select_int8_engine(const std::string& engine);

class Int8LinearImpl : public torch::nn::Module {
 public:
  Int8LinearImpl(const Int8Rows& weight, const torch::Tensor& bias);
  // x (..., in) f32 -> (..., out) f32.
  torch::Tensor forward(const torch::Tensor& x);

 private:
  c10::IValue packed_;  // the engine's prepacked weight, bias included
};
TORCH_MODULE(Int8Linear);

// Every Linear of `module` named in `weights` (by its weight's full name, "...query.weight")
// gets an Int8Linear child named "int8" that run_linear uses from then on.
void attach_int8_linears(torch::nn::Module& module, const std::map<std::string, Int8Rows>& weights);
torch::Tensor run_linear(torch::nn::Linear& layer, const torch::Tensor& x);

}  // namespace newscls::bert
