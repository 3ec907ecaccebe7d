// The optimiser of both training loops: AdamW for dense parameters, plus a lazy AdamW for
// embedding tables whose gradients are sparse (the hashed n-gram tables). A sparse table updates
// only the rows a batch touched, so its size costs memory but no time per step; a dense
// AdamW over a 32768 x 256 table more than halved training throughput.
//
//   Optimiser opt(*model, lr, weight_decay);
//   opt.zero_grad(); loss.backward(); opt.step(scheduled_lr, clip_norm);
//   opt.save(dir); opt.load(dir);     // checkpoint files optimizer.pt, sparse_optimizer.bin
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace newscls::bert {

// Names of the weights of `module`'s embedding tables built with sparse gradients.
std::set<std::string> sparse_gradient_weights(torch::nn::Module& module);

class Optimiser {
 public:
  Optimiser(torch::nn::Module& module, double lr, double weight_decay);
  void zero_grad();
  // Scales all gradients so their joint L2 norm is at most clip_norm (0 = no clipping),
  // then takes one step at learning rate lr.
  void step(double lr, double clip_norm);
  void save(const std::string& dir) const;
  void load(const std::string& dir);

 private:
  struct SparseTable {
    std::string name;
    torch::Tensor param, exp_avg, exp_avg_sq;
    double weight_decay = 0;
  };
  void clip(double clip_norm);
  void step_sparse(SparseTable& table, double lr);

  std::unique_ptr<torch::optim::AdamW> dense_;
  std::vector<torch::Tensor> dense_params_;
  std::vector<SparseTable> sparse_;
  std::int64_t steps_ = 0;
};

}  // namespace newscls::bert
