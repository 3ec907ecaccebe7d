#include "bert/model/int8_payload.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "bert/kernels/int8_rows.h"
#include "bert/kernels/quantized_linear.h"
#include "bert/model/attention.h"
#include "bert/model/tensor_io.h"
#include "bert/model/state_payload.h"
#include "newscls/core/binary_io.h"
#include "newscls/core/error.h"

namespace newscls::bert {
namespace {

constexpr char kMagic[4] = {'N', 'C', 'Q', '8'};
constexpr std::uint8_t kF32 = 0, kInt8 = 1;

void write_tensor(PayloadWriter& w, const std::string& name, const torch::Tensor& tensor, bool int8) {
  const torch::Tensor t = tensor.detach().to(torch::kFloat32).contiguous();
  w.str(name);
  w.u8(int8 ? kInt8 : kF32);
  w.u32(static_cast<std::uint32_t>(t.dim()));
  for (std::int64_t d : t.sizes()) w.u64(static_cast<std::uint64_t>(d));
  if (!int8) {
    w.f32_array(t.data_ptr<float>(), static_cast<std::size_t>(t.numel()));
    return;
  }
  const Int8Rows q = quantize_rows(t);
  w.f32_array(q.scales.data_ptr<float>(), static_cast<std::size_t>(q.scales.numel()));
  w.str(std::string(reinterpret_cast<const char*>(q.values.data_ptr<std::int8_t>()),
                    static_cast<std::size_t>(q.values.numel())));
}

}  // namespace

void save_int8_weights(const std::string& path, const torch::nn::Module& model, const Int8Layout& layout) {
  const NamedTensors state = named_state(model);
  PayloadWriter w(path, kMagic, kInt8PayloadVersion);
  w.str(layout.engine);
  w.u64(state.size());
  for (const auto& [name, tensor] : state) write_tensor(w, name, tensor, layout.int8_names.count(name) > 0);
  w.finish();
}

Int8Layout load_int8_weights(const std::string& path, torch::nn::Module& model) {
  const NamedTensors state = named_state(model);
  std::vector<TensorSpec> specs;
  for (const auto& [name, t] : state)
    specs.push_back({name, std::vector<std::int64_t>(t.sizes().begin(), t.sizes().end())});
  // The runtime's reader checks names, shapes and values as the runtime loads the bundle.
  Int8State read = read_int8_state(path, specs);
  Int8Layout layout;
  layout.engine = read.engine;
  std::map<std::string, Int8Rows> int8;
  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < state.size(); ++i) {
    NamedArray& a = read.tensors[i];
    torch::Tensor target = state[i].second;
    std::vector<float> values = dequantized(a);
    target.copy_(torch::from_blob(values.data(), target.sizes(), torch::kFloat32));
    if (a.int8.empty()) continue;
    Int8Rows q;
    q.values = torch::from_blob(a.int8.data(), target.sizes(), torch::kInt8).clone();
    q.scales = torch::from_blob(a.scales.data(), {target.size(0)}, torch::kFloat32).clone();
    int8.emplace(a.name, std::move(q));
  }
  for (const auto& [name, q] : int8) layout.int8_names.insert(name);
  try {
    select_int8_engine(layout.engine);
  } catch (const Error& e) {
    throw ModelFormatError(path, std::string("needs the quantized engine it was made for: ") + e.what());
  }
  attach_int8_linears(model, int8);
  for (const auto& m : model.modules()) {
    if (auto* attention = m->as<MultiHeadAttentionImpl>()) attention->stack_int8_projections();
  }
  return layout;
}

}  // namespace newscls::bert
