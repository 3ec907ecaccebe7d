#include "bert/model/fast_dropout.h"

#include <cmath>

#include "newscls/core/splitmix.h"

namespace newscls::bert {

void MaskRng::reseed(std::uint64_t seed) {
  // splitmix64 scrambles small seeds into a well-mixed non-zero xorshift state.
  state_ = splitmix64(seed) | 1;
}

torch::Tensor MaskRng::mask(torch::IntArrayRef shape, double p) {
  torch::Tensor out = torch::empty(shape, torch::kFloat32);
  float* data = out.data_ptr<float>();
  const std::int64_t n = out.numel();
  const auto threshold = static_cast<std::uint32_t>(std::lround(p * 65536.0));
  const float keep = static_cast<float>(1.0 / (1.0 - p));
  std::uint64_t s = state_;
  std::int64_t i = 0;
  while (i < n) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    std::uint64_t bits = s;
    for (int j = 0; j < 4 && i < n; ++j, ++i, bits >>= 16) {
      data[i] = (bits & 0xFFFF) < threshold ? 0.0f : keep;
    }
  }
  state_ = s;
  return out;
}

torch::Tensor FastDropoutImpl::forward(const torch::Tensor& x) {
  if (!is_training() || p_ <= 0) return x;
  return x * rng_->mask(x.sizes(), p_);
}

}  // namespace newscls::bert
