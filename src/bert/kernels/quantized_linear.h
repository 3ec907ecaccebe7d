// int8 inference for the bert family: per-row symmetric int8 tensors (a Linear's output
// channels, an embedding table's rows) and a Linear twin that runs an int8 GEMM, quantising its
// input dynamically per call and adding the F32 bias. Engine "onednn" calls oneDNN's matmul
// directly (int8_gemm.h: inputs quantised per row); "qnnpack" runs LibTorch's
// quantized::linear_dynamic on QNNPACK (inputs per tensor, asymmetric uint8). Debian's LibTorch
// has no FBGEMM.
//
//   Int8Rows q = quantize_rows(weight);                 // q.values int8, q.scales f32 (rows)
//   attach_int8_linears(*model, q8_of_each_linear);     // Linear -> child "int8"
//   torch::Tensor y = run_linear(layer, x);             // the int8 twin when attached
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "bert/kernels/int8_rows.h"

namespace newscls::bert {

// The quantized engine int8 GEMMs run on: "onednn" or "qnnpack"; throws UsageError naming
// the setting when this LibTorch lacks it.
void select_int8_engine(const std::string& engine);

class Int8Gemm;

class Int8LinearImpl : public torch::nn::Module {
 public:
  Int8LinearImpl(const Int8Rows& weight, const torch::Tensor& bias);
  // x (..., in) f32 -> (..., out) f32.
  torch::Tensor forward(const torch::Tensor& x);
  // Whether twins can be stacked into one GEMM (engine onednn), and what to stack.
  bool stackable() const { return gemm_ != nullptr; }
  const Int8Rows& weight() const { return weight_; }
  const torch::Tensor& bias() const { return bias_; }

 private:
  Int8Rows weight_;
  torch::Tensor bias_;              // f32 (out); zeros when the Linear has none
  std::shared_ptr<Int8Gemm> gemm_;  // engine onednn
  c10::IValue packed_;              // engine qnnpack: LibTorch's prepacked weight, bias included
};
TORCH_MODULE(Int8Linear);

// Every Linear of `module` named in `weights` (by its weight's full name, "...query.weight")
// gets an Int8Linear child named "int8" that run_linear uses from then on.
void attach_int8_linears(torch::nn::Module& module, const std::map<std::string, Int8Rows>& weights);
torch::Tensor run_linear(torch::nn::Linear& layer, const torch::Tensor& x);
// The int8 twin attached to `layer`, or nullptr.
Int8LinearImpl* int8_twin(torch::nn::Linear& layer);
// One twin for several Linears of the same input: their rows stacked (outputs concatenated).
Int8Linear stack_int8_twins(const std::vector<Int8LinearImpl*>& twins);

}  // namespace newscls::bert
