// Dropout whose masks come from a small xorshift generator instead of bernoulli_.
//
// LibTorch's dropout draws every mask element through bernoulli_, which took about a
// quarter of a small BERT training step in a profile. Here a 64-bit xorshift state yields
// four 16-bit draws per step, and the mask (0 or 1/(1-p)) is multiplied in, so autograd
// handles the backward pass. The generator is shared by every dropout of one model and
// reseeded by the trainer, which keeps runs deterministic under a seed.
//
//   auto rng = std::make_shared<MaskRng>(seed);
//   FastDropout drop(0.1, rng);  y = drop(x);   // identity in eval mode
#pragma once

#include <cstdint>
#include <memory>

#include <torch/torch.h>

namespace newscls::bert {

class MaskRng {
 public:
  explicit MaskRng(std::uint64_t seed) { reseed(seed); }
  void reseed(std::uint64_t seed);
  // A float tensor of the given shape holding 0 with probability p, else 1/(1-p).
  torch::Tensor mask(torch::IntArrayRef shape, double p);

 private:
  std::uint64_t state_ = 1;
};

class FastDropoutImpl : public torch::nn::Module {
 public:
  FastDropoutImpl(double p, std::shared_ptr<MaskRng> rng) : p_(p), rng_(std::move(rng)) {}
  torch::Tensor forward(const torch::Tensor& x);
  double p() const { return p_; }

 private:
  double p_;
  std::shared_ptr<MaskRng> rng_;
};
TORCH_MODULE(FastDropout);

}  // namespace newscls::bert
