#include "bert/model/int8_payload.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "bert/kernels/int8_rows.h"
#include "bert/kernels/quantized_linear.h"
#include "bert/model/attention.h"
#include "bert/model/tensor_io.h"
#include "newscls/core/binary_io.h"
#include "newscls/core/error.h"

namespace newscls::bert {
namespace {

constexpr char kMagic[4] = {'N', 'C', 'Q', '8'};
constexpr std::uint32_t kMaxDims = 8;
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

// One tensor into `target`; returns its int8 rows when stored so (else undefined values).
Int8Rows read_tensor(PayloadReader& r, const std::string& name, torch::Tensor& target) {
  const std::string& path = r.path();
  const std::string found = r.str();
  if (found != name) throw ModelFormatError(path, "tensor '" + found + "' where '" + name + "' was expected");
  const std::uint8_t kind = r.u8();
  if (kind != kF32 && kind != kInt8) throw ModelFormatError(path, "tensor '" + name + "' has unknown kind " + std::to_string(kind));
  const std::uint32_t ndim = r.u32();
  if (ndim > kMaxDims) throw ModelFormatError(path, "tensor '" + name + "' has too many dimensions");
  std::vector<std::int64_t> shape;
  for (std::uint32_t i = 0; i < ndim; ++i) shape.push_back(static_cast<std::int64_t>(r.u64()));
  if (torch::IntArrayRef(shape) != target.sizes()) {
    throw ModelFormatError(path, "tensor '" + name + "' has shape " + c10::str(torch::IntArrayRef(shape)) +
                                     ", expected " + c10::str(target.sizes()));
  }
  if (kind == kF32) {
    std::vector<float> values = r.f32_array();
    if (static_cast<std::int64_t>(values.size()) != target.numel()) {
      throw ModelFormatError(path, "tensor '" + name + "' has the wrong number of values");
    }
    target.copy_(torch::from_blob(values.data(), target.sizes(), torch::kFloat32));
    return {};
  }
  std::vector<float> scales = r.f32_array();
  const std::string bytes = r.str();
  if (ndim < 1 || static_cast<std::int64_t>(scales.size()) != shape[0] ||
      static_cast<std::int64_t>(bytes.size()) != target.numel()) {
    throw ModelFormatError(path, "int8 tensor '" + name + "' has the wrong number of scales or values");
  }
  if (std::any_of(scales.begin(), scales.end(), [](float s) { return !(s > 0.0f) || !std::isfinite(s); })) {
    throw ModelFormatError(path, "int8 tensor '" + name + "' has a scale that is not a positive number");
  }
  Int8Rows q;
  q.values = torch::from_blob(const_cast<char*>(bytes.data()), target.sizes(), torch::kInt8).clone();
  q.scales = torch::from_blob(scales.data(), {shape[0]}, torch::kFloat32).clone();
  target.copy_(dequantize_rows(q));
  return q;
}

}  // namespace

bool has_int8_weights(const Bundle& bundle) { return bundle.manifest().payloads.count(kInt8Payload) > 0; }

void refuse_int8_source(const Bundle& bundle) {
  if (has_int8_weights(bundle)) {
    throw UsageError(bundle.dir() + " holds int8 weights: compress the float bundle it was quantised from");
  }
}

void save_int8_weights(const std::string& path, const torch::nn::Module& model, const Int8Layout& layout) {
  const NamedTensors state = named_state(model);
  PayloadWriter w(path, kMagic, kInt8PayloadVersion);
  w.str(layout.engine);
  w.u64(state.size());
  for (const auto& [name, tensor] : state) write_tensor(w, name, tensor, layout.int8_names.count(name) > 0);
  w.finish();
}

Int8Layout load_int8_weights(const std::string& path, torch::nn::Module& model) {
  PayloadReader r(path, kMagic, kInt8PayloadVersion);
  if (r.version() != kInt8PayloadVersion) {
    throw ModelFormatError(path, "int8 payload version " + std::to_string(r.version()) + " is not " +
                                     std::to_string(kInt8PayloadVersion));
  }
  Int8Layout layout;
  layout.engine = r.str();
  const NamedTensors state = named_state(model);
  const std::uint64_t n = r.u64();
  if (n != state.size()) {
    throw ModelFormatError(path, "holds " + std::to_string(n) + " tensors, expected " + std::to_string(state.size()));
  }
  std::map<std::string, Int8Rows> int8;
  torch::NoGradGuard no_grad;
  for (auto [name, target] : state) {
    Int8Rows q = read_tensor(r, name, target);
    if (q.values.defined()) int8.emplace(name, std::move(q));
  }
  r.expect_end();
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
