#include "bert/kernels/int8_rows.h"

namespace newscls::bert {

Int8Rows quantize_rows(const torch::Tensor& weight) {
  const torch::Tensor w = weight.detach().to(torch::kFloat32).contiguous();
  const torch::Tensor flat = w.reshape({w.size(0), -1});
  torch::Tensor scales = flat.abs().amax(1) / 127.0;
  scales = torch::where(scales > 0, scales, torch::ones_like(scales));
  const torch::Tensor q = torch::round(flat / scales.unsqueeze(1)).clamp(-127, 127).to(torch::kInt8);
  return {q.reshape(w.sizes()).contiguous(), scales.contiguous()};
}

torch::Tensor dequantize_rows(const Int8Rows& q) {
  const torch::Tensor flat = q.values.reshape({q.values.size(0), -1}).to(torch::kFloat32);
  return (flat * q.scales.unsqueeze(1)).reshape(q.values.sizes());
}

}  // namespace newscls::bert
