#include "bert/model/tensor_io.h"

#include <cstdint>

#include "newscls/core/binary_io.h"
#include "newscls/core/error.h"

namespace newscls::bert {
namespace {

constexpr char kMagic[4] = {'N', 'C', 'B', 'W'};
constexpr std::uint32_t kVersion = 1;
constexpr std::uint32_t kMaxDims = 8;

std::string shape_string(torch::IntArrayRef shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + ")";
}

}  // namespace

NamedTensors named_state(const torch::nn::Module& module) {
  NamedTensors out;
  for (auto& p : module.named_parameters()) out.emplace_back(p.key(), p.value());
  for (auto& b : module.named_buffers()) out.emplace_back(b.key(), b.value());
  return out;
}

NamedTensors clone_state(const NamedTensors& state) {
  NamedTensors out;
  for (const auto& [name, t] : state) out.emplace_back(name, t.detach().clone());
  return out;
}

std::int64_t parameter_count(const torch::nn::Module& module) {
  std::int64_t n = 0;
  for (const auto& p : module.parameters()) n += p.numel();
  return n;
}

void copy_state(const NamedTensors& from, const NamedTensors& into) {
  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < into.size(); ++i) into[i].second.copy_(from[i].second);
}

void save_tensors(const std::string& path, const NamedTensors& tensors) {
  PayloadWriter w(path, kMagic, kVersion);
  w.u64(tensors.size());
  for (const auto& [name, tensor] : tensors) {
    torch::Tensor t = tensor.detach().to(torch::kFloat32).contiguous();
    w.str(name);
    w.u32(static_cast<std::uint32_t>(t.dim()));
    for (std::int64_t d : t.sizes()) w.u64(static_cast<std::uint64_t>(d));
    w.f32_array(t.data_ptr<float>(), static_cast<std::size_t>(t.numel()));
  }
  w.finish();
}

void load_tensors(const std::string& path, const NamedTensors& into) {
  PayloadReader r(path, kMagic, kVersion);
  const std::uint64_t n = r.u64();
  if (n != into.size()) {
    throw ModelFormatError(path, "holds " + std::to_string(n) + " tensors, expected " + std::to_string(into.size()));
  }
  torch::NoGradGuard no_grad;
  for (const auto& [name, target] : into) {
    const std::string found = r.str();
    if (found != name) throw ModelFormatError(path, "tensor '" + found + "' where '" + name + "' was expected");
    const std::uint32_t ndim = r.u32();
    if (ndim > kMaxDims) throw ModelFormatError(path, "tensor '" + name + "' has too many dimensions");
    std::vector<std::int64_t> shape;
    for (std::uint32_t i = 0; i < ndim; ++i) shape.push_back(static_cast<std::int64_t>(r.u64()));
    if (torch::IntArrayRef(shape) != target.sizes()) {
      throw ModelFormatError(path, "tensor '" + name + "' has shape " + shape_string(shape) + ", expected " +
                                       shape_string(target.sizes()));
    }
    std::vector<float> values = r.f32_array();
    if (static_cast<std::int64_t>(values.size()) != target.numel()) {
      throw ModelFormatError(path, "tensor '" + name + "' has the wrong number of values");
    }
    target.copy_(torch::from_blob(values.data(), target.sizes(), torch::kFloat32));
  }
  r.expect_end();
}

}  // namespace newscls::bert
