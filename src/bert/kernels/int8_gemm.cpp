#include "bert/kernels/int8_gemm.h"

#include <vector>

#include "newscls/core/error.h"

namespace newscls::bert {

Int8Gemm::Int8Gemm(const Int8Rows& weight, const torch::Tensor& bias) {
  if (weight.values.dim() != 2 || weight.values.scalar_type() != torch::kInt8) {
    throw UsageError("an int8 GEMM needs a 2-d int8 weight");
  }
  const torch::Tensor values = weight.values.contiguous();
  const torch::Tensor scales = weight.scales.to(torch::kFloat32).contiguous();
  std::vector<float> b;
  if (bias.defined()) {
    const torch::Tensor f = bias.detach().to(torch::kFloat32).contiguous();
    b.assign(f.data_ptr<float>(), f.data_ptr<float>() + f.numel());
  }
  matmul_ = std::make_unique<Int8Matmul>(values.data_ptr<std::int8_t>(), scales.data_ptr<float>(), std::move(b),
                                         values.size(0), values.size(1));
}

torch::Tensor Int8Gemm::forward(const torch::Tensor& x) const {
  const std::int64_t in = matmul_->in(), out = matmul_->out();
  if (x.size(-1) != in) throw UsageError("int8 GEMM input has the wrong width");
  const torch::Tensor flat = x.reshape({-1, in}).to(torch::kFloat32).contiguous();
  const std::int64_t rows = flat.size(0);
  torch::Tensor y = torch::empty({rows, out}, torch::kFloat32);
  matmul_->forward(flat.data_ptr<float>(), rows, y.data_ptr<float>());
  std::vector<std::int64_t> shape(x.sizes().begin(), x.sizes().end());
  shape.back() = out;
  return y.view(shape);
}

}  // namespace newscls::bert
