#include "bert/train/optimiser.h"

#include <cmath>
#include <filesystem>

#include "bert/model/tensor_io.h"
#include "newscls/core/error.h"

namespace newscls::bert {
namespace {

namespace fs = std::filesystem;

constexpr double kBeta1 = 0.9, kBeta2 = 0.999, kEps = 1e-8;  // AdamW's defaults

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Decoupled weight decay on matrices only: biases and norms are exempt.
bool decays(const std::string& name) { return !ends_with(name, "bias") && name.find("norm") == std::string::npos; }

}  // namespace

std::set<std::string> sparse_gradient_weights(torch::nn::Module& module) {
  std::set<std::string> names;
  for (const auto& m : module.named_modules("", /*include_self=*/false)) {
    const auto* table = m.value()->as<torch::nn::EmbeddingImpl>();
    if (table && table->options.sparse()) names.insert(m.key() + ".weight");
  }
  return names;
}

Optimiser::Optimiser(torch::nn::Module& module, double lr, double weight_decay) {
  const std::set<std::string> sparse_weights = sparse_gradient_weights(module);
  std::vector<torch::Tensor> decay, plain;
  for (auto& p : module.named_parameters()) {
    if (!p.value().requires_grad()) continue;  // frozen: no step, no decay
    if (sparse_weights.count(p.key()) > 0) {
      sparse_.push_back({p.key(), p.value(), torch::zeros_like(p.value()), torch::zeros_like(p.value()),
                         decays(p.key()) ? weight_decay : 0.0});
      continue;
    }
    (decays(p.key()) ? decay : plain).push_back(p.value());
    dense_params_.push_back(p.value());
  }
  using torch::optim::AdamWOptions;
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, std::make_unique<AdamWOptions>(AdamWOptions(lr).weight_decay(weight_decay)));
  groups.emplace_back(plain, std::make_unique<AdamWOptions>(AdamWOptions(lr).weight_decay(0.0)));
  dense_ = std::make_unique<torch::optim::AdamW>(std::move(groups), AdamWOptions(lr));
}

void Optimiser::zero_grad() {
  dense_->zero_grad();
  // Sparse gradients accumulate by concatenation, so they are dropped, not zeroed.
  for (SparseTable& t : sparse_) t.param.mutable_grad() = torch::Tensor();
}

void Optimiser::clip(double clip_norm) {
  std::vector<torch::Tensor> norms;
  for (const torch::Tensor& p : dense_params_) {
    if (p.grad().defined()) norms.push_back(p.grad().norm());
  }
  for (SparseTable& t : sparse_) {
    if (!t.param.grad().defined()) continue;
    norms.push_back(t.param.grad()._values().norm());
  }
  if (norms.empty()) return;
  const double total = torch::stack(norms).norm().item<double>();
  const double scale = clip_norm / (total + 1e-6);
  if (scale >= 1.0) return;
  for (const torch::Tensor& p : dense_params_) {
    if (p.grad().defined()) p.grad().mul_(scale);
  }
  for (SparseTable& t : sparse_) {
    if (t.param.grad().defined()) t.param.grad()._values().mul_(scale);
  }
}

void Optimiser::step(double lr, double clip_norm) {
  for (SparseTable& t : sparse_) {  // duplicate rows summed once, for the clip and the step
    if (t.param.grad().defined()) t.param.mutable_grad() = t.param.grad().coalesce();
  }
  if (clip_norm > 0) clip(clip_norm);
  for (auto& group : dense_->param_groups()) {
    static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
  }
  dense_->step();
  ++steps_;
  for (SparseTable& t : sparse_) step_sparse(t, lr);
}

// AdamW on the touched rows only, with the bias correction of the global step count
// (what PyTorch's SparseAdam does, plus decoupled decay on those rows).
void Optimiser::step_sparse(SparseTable& t, double lr) {
  if (!t.param.grad().defined()) return;
  torch::NoGradGuard no_grad;
  const torch::Tensor& grad = t.param.grad();
  torch::Tensor rows = grad._indices()[0];
  torch::Tensor g = grad._values();
  torch::Tensor m = t.exp_avg.index_select(0, rows).mul_(kBeta1).add_(g, 1 - kBeta1);
  torch::Tensor v = t.exp_avg_sq.index_select(0, rows).mul_(kBeta2).addcmul_(g, g, 1 - kBeta2);
  t.exp_avg.index_copy_(0, rows, m);
  t.exp_avg_sq.index_copy_(0, rows, v);
  const double c1 = 1 - std::pow(kBeta1, static_cast<double>(steps_));
  const double c2 = 1 - std::pow(kBeta2, static_cast<double>(steps_));
  torch::Tensor w = t.param.index_select(0, rows);
  w.mul_(1 - lr * t.weight_decay);
  w.addcdiv_(m, v.div(c2).sqrt_().add_(kEps), -lr / c1);
  t.param.index_copy_(0, rows, w);
}

void Optimiser::save(const std::string& dir) const {
  torch::save(*dense_, (fs::path(dir) / "optimizer.pt").string());
  if (sparse_.empty()) return;
  NamedTensors state{{"steps", torch::full({1}, static_cast<double>(steps_), torch::kFloat32)}};
  for (const SparseTable& t : sparse_) {
    state.emplace_back(t.name + ".exp_avg", t.exp_avg);
    state.emplace_back(t.name + ".exp_avg_sq", t.exp_avg_sq);
  }
  save_tensors((fs::path(dir) / "sparse_optimizer.bin").string(), state);
}

void Optimiser::load(const std::string& dir) {
  const std::string path = (fs::path(dir) / "optimizer.pt").string();
  try {
    torch::load(*dense_, path);
  } catch (const c10::Error& e) {  // LibTorch's own message, with its C++ stack trace, named no file
    throw ModelFormatError(path, std::string("truncated or corrupt (") + e.what_without_backtrace() +
                                     "); train without --resume to start over");
  }
  if (sparse_.empty()) return;
  torch::Tensor steps = torch::zeros({1});
  NamedTensors state{{"steps", steps}};
  for (SparseTable& t : sparse_) {
    state.emplace_back(t.name + ".exp_avg", t.exp_avg);
    state.emplace_back(t.name + ".exp_avg_sq", t.exp_avg_sq);
  }
  load_tensors((fs::path(dir) / "sparse_optimizer.bin").string(), state);
  steps_ = static_cast<std::int64_t>(steps.item<float>());
}

}  // namespace newscls::bert
