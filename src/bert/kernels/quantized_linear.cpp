#include "bert/kernels/quantized_linear.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include "bert/kernels/int8_gemm.h"
#include "newscls/core/error.h"

namespace newscls::bert {
namespace {

constexpr const char* kInt8Child = "int8";

// Called boxed: the packed-weight class is not in Debian's public headers.
c10::OperatorHandle op(const char* name) { return c10::Dispatcher::singleton().findSchemaOrThrow(name, ""); }

}  // namespace

void select_int8_engine(const std::string& engine) {
  const at::QEngine wanted = engine == "onednn" ? at::QEngine::ONEDNN
                             : engine == "qnnpack"
                                 ? at::QEngine::QNNPACK
                                 : throw ConfigError("engine", "is '" + engine + "'; use onednn or qnnpack");
  const auto& have = at::globalContext().supportedQEngines();
  if (std::find(have.begin(), have.end(), wanted) == have.end()) {
    throw UsageError("this LibTorch has no " + engine + " quantized engine (set engine to another one)");
  }
  at::globalContext().setQEngine(wanted);
}

Int8LinearImpl::Int8LinearImpl(const Int8Rows& weight, const torch::Tensor& bias)
    : weight_(weight),
      bias_(bias.defined() ? bias.detach().to(torch::kFloat32).contiguous() : torch::zeros({weight.values.size(0)})) {
  if (at::globalContext().qEngine() == at::QEngine::ONEDNN) {
    gemm_ = std::make_shared<Int8Gemm>(weight_, bias_);
    return;
  }
  const torch::Tensor zero_points = torch::zeros({weight.scales.size(0)}, torch::kInt64);
  const torch::Tensor q =
      at::_make_per_channel_quantized_tensor(weight.values, weight.scales.to(torch::kFloat64), zero_points, /*axis=*/0);
  torch::jit::Stack stack{q, bias.defined() ? c10::IValue(bias.detach().contiguous()) : c10::IValue()};
  op("quantized::linear_prepack").callBoxed(&stack);
  packed_ = stack.at(0);
}

torch::Tensor Int8LinearImpl::forward(const torch::Tensor& x) {
  if (gemm_) return gemm_->forward(x);
  static const c10::OperatorHandle linear = op("quantized::linear_dynamic");
  torch::jit::Stack stack{x.contiguous(), packed_, false};
  linear.callBoxed(&stack);
  return stack.at(0).toTensor();
}

void attach_int8_linears(torch::nn::Module& module, const std::map<std::string, Int8Rows>& weights) {
  for (const auto& item : module.named_modules()) {
    auto* linear = item.value()->as<torch::nn::LinearImpl>();
    const std::string prefix = item.key().empty() ? "" : item.key() + ".";
    const auto found = weights.find(prefix + "weight");
    if (linear == nullptr || found == weights.end()) continue;
    if (linear->named_children().contains(kInt8Child)) {
      linear->replace_module(kInt8Child, Int8Linear(found->second, linear->bias));
    } else {
      linear->register_module(kInt8Child, Int8Linear(found->second, linear->bias));
    }
  }
}

Int8LinearImpl* int8_twin(torch::nn::Linear& layer) {
  for (const auto& child : layer->children()) {
    if (auto* q = child->as<Int8LinearImpl>()) return q;
  }
  return nullptr;
}

torch::Tensor run_linear(torch::nn::Linear& layer, const torch::Tensor& x) {
  if (Int8LinearImpl* q = int8_twin(layer)) return q->forward(x);
  return layer(x);
}

Int8Linear stack_int8_twins(const std::vector<Int8LinearImpl*>& twins) {
  std::vector<torch::Tensor> values, scales, biases;
  for (const Int8LinearImpl* t : twins) {
    values.push_back(t->weight().values);
    scales.push_back(t->weight().scales);
    biases.push_back(t->bias());
  }
  return Int8Linear(Int8Rows{torch::cat(values), torch::cat(scales)}, torch::cat(biases));
}

}  // namespace newscls::bert
