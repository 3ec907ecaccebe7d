#include "bert/model/state_payload.h"

#include <algorithm>
#include <cmath>

#include "newscls/core/binary_io.h"
#include "newscls/core/error.h"

namespace newscls::bert {
namespace {

constexpr char kFloatMagic[4] = {'N', 'C', 'B', 'W'};
constexpr std::uint32_t kFloatVersion = 1;
constexpr char kInt8Magic[4] = {'N', 'C', 'Q', '8'};
constexpr std::uint32_t kMaxDims = 8;
constexpr std::uint8_t kF32 = 0, kInt8 = 1;

void add_linear(std::vector<TensorSpec>& specs, const std::string& name, std::int64_t out, std::int64_t in) {
  specs.push_back({name + ".weight", {out, in}});
  specs.push_back({name + ".bias", {out}});
}

void add_norm(std::vector<TensorSpec>& specs, const std::string& name, std::int64_t hidden) {
  specs.push_back({name + ".weight", {hidden}});
  specs.push_back({name + ".bias", {hidden}});
}

std::int64_t elements(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

// As model/tensor_io.cpp writes a shape: "(a,b)".
std::string float_shape(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + ")";
}

// As model/int8_payload.cpp writes a shape (LibTorch's IntArrayRef): "[a, b]".
std::string int8_shape(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

void check_name(PayloadReader& r, const TensorSpec& spec) {
  const std::string found = r.str();
  if (found != spec.name) {
    throw ModelFormatError(r.path(), "tensor '" + found + "' where '" + spec.name + "' was expected");
  }
}

std::vector<std::int64_t> read_shape(PayloadReader& r, const TensorSpec& spec, bool int8_payload) {
  const std::uint32_t ndim = r.u32();
  if (ndim > kMaxDims) throw ModelFormatError(r.path(), "tensor '" + spec.name + "' has too many dimensions");
  std::vector<std::int64_t> shape;
  for (std::uint32_t i = 0; i < ndim; ++i) shape.push_back(static_cast<std::int64_t>(r.u64()));
  if (shape != spec.shape) {
    const std::string found = int8_payload ? int8_shape(shape) : float_shape(shape);
    const std::string wanted = int8_payload ? int8_shape(spec.shape) : float_shape(spec.shape);
    throw ModelFormatError(r.path(), "tensor '" + spec.name + "' has shape " + found + ", expected " + wanted);
  }
  return shape;
}

std::vector<float> read_values(PayloadReader& r, const TensorSpec& spec) {
  std::vector<float> values = r.f32_array();
  if (static_cast<std::int64_t>(values.size()) != elements(spec.shape)) {
    throw ModelFormatError(r.path(), "tensor '" + spec.name + "' has the wrong number of values");
  }
  return values;
}

void check_count(const PayloadReader& r, std::uint64_t n, std::size_t expected) {
  if (n != expected) {
    throw ModelFormatError(r.path(), "holds " + std::to_string(n) + " tensors, expected " + std::to_string(expected));
  }
}

NamedArray read_int8_tensor(PayloadReader& r, const TensorSpec& spec) {
  const std::string& path = r.path();
  check_name(r, spec);
  const std::uint8_t kind = r.u8();
  if (kind != kF32 && kind != kInt8) {
    throw ModelFormatError(path, "tensor '" + spec.name + "' has unknown kind " + std::to_string(kind));
  }
  NamedArray a{spec.name, read_shape(r, spec, true), {}, {}, {}};
  if (kind == kF32) {
    a.values = read_values(r, spec);
    return a;
  }
  a.scales = r.f32_array();
  const std::string bytes = r.str();
  const std::int64_t n = elements(a.shape);
  if (a.shape.empty() || static_cast<std::int64_t>(a.scales.size()) != a.shape[0] ||
      static_cast<std::int64_t>(bytes.size()) != n) {
    throw ModelFormatError(path, "int8 tensor '" + spec.name + "' has the wrong number of scales or values");
  }
  if (std::any_of(a.scales.begin(), a.scales.end(), [](float s) { return !(s > 0.0f) || !std::isfinite(s); })) {
    throw ModelFormatError(path, "int8 tensor '" + spec.name + "' has a scale that is not a positive number");
  }
  a.int8.assign(bytes.begin(), bytes.end());
  return a;
}

}  // namespace

std::vector<TensorSpec> expected_state(const Architecture& arch, std::int64_t num_classes) {
  const std::int64_t h = arch.hidden;
  std::vector<TensorSpec> s;
  s.push_back({"encoder.token_embedding.weight", {arch.vocab_size, h}});
  s.push_back({"encoder.position_embedding.weight", {arch.positions > 0 ? arch.positions : arch.max_len, h}});
  if (arch.type_vocab_size > 0) s.push_back({"encoder.token_type_embedding.weight", {arch.type_vocab_size, h}});
  if (arch.bigram_buckets > 1) s.push_back({"encoder.bigram_embedding.weight", {arch.bigram_buckets, h}});
  if (arch.trigram_buckets > 1) s.push_back({"encoder.trigram_embedding.weight", {arch.trigram_buckets, h}});
  add_norm(s, "encoder.norm", h);
  const std::int64_t d_head = h / arch.heads;
  for (std::int64_t l = 0; l < arch.layers; ++l) {
    const std::string p = "encoder.layers." + std::to_string(l) + ".";
    const std::int64_t inner = layer_heads(arch, l) * d_head;
    for (const char* m : {"query", "key", "value"}) add_linear(s, p + "attention." + m, inner, h);
    add_linear(s, p + "attention.output", h, inner);
    add_norm(s, p + "attention_norm", h);
    add_linear(s, p + "intermediate", arch.ff, h);
    add_linear(s, p + "output", h, arch.ff);
    add_norm(s, p + "output_norm", h);
  }
  if (arch.pooler) add_linear(s, "pooler", h, h);
  if (num_classes > 0) add_linear(s, "classifier", num_classes, h);
  return s;
}

std::vector<NamedArray> read_float_state(const std::string& path, const std::vector<TensorSpec>& specs) {
  PayloadReader r(path, kFloatMagic, kFloatVersion);
  check_count(r, r.u64(), specs.size());
  std::vector<NamedArray> out;
  out.reserve(specs.size());
  for (const TensorSpec& spec : specs) {
    check_name(r, spec);
    NamedArray a{spec.name, read_shape(r, spec, false), {}, {}, {}};
    a.values = read_values(r, spec);
    out.push_back(std::move(a));
  }
  r.expect_end();
  return out;
}

Int8State read_int8_state(const std::string& path, const std::vector<TensorSpec>& specs) {
  PayloadReader r(path, kInt8Magic, kInt8PayloadVersion);
  if (r.version() != kInt8PayloadVersion) {
    throw ModelFormatError(
        path, "int8 payload version " + std::to_string(r.version()) + " is not " + std::to_string(kInt8PayloadVersion));
  }
  Int8State state;
  state.engine = r.str();
  check_count(r, r.u64(), specs.size());
  state.tensors.reserve(specs.size());
  for (const TensorSpec& spec : specs) state.tensors.push_back(read_int8_tensor(r, spec));
  r.expect_end();
  return state;
}

namespace {

void write_shape(PayloadWriter& w, const NamedArray& a) {
  w.u32(static_cast<std::uint32_t>(a.shape.size()));
  for (std::int64_t d : a.shape) w.u64(static_cast<std::uint64_t>(d));
}

}  // namespace

std::vector<float> dequantized(const NamedArray& a) {
  if (a.int8.empty()) return a.values;
  // As dequantize_rows: each value times its row's scale, in f32.
  std::vector<float> out(a.int8.size());
  const std::size_t cols = a.scales.empty() ? 0 : a.int8.size() / a.scales.size();
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<float>(a.int8[i]) * a.scales[i / cols];
  return out;
}

void write_float_state(const std::string& path, const std::vector<NamedArray>& state) {
  PayloadWriter w(path, kFloatMagic, kFloatVersion);
  w.u64(state.size());
  for (const NamedArray& a : state) {
    w.str(a.name);
    write_shape(w, a);
    if (a.int8.empty()) {
      w.f32_array(a.values.data(), a.values.size());  // no copy of a float tensor
    } else {
      const std::vector<float> values = dequantized(a);
      w.f32_array(values.data(), values.size());
    }
  }
  w.finish();
}

void quantize_array_rows(NamedArray& a) {
  const std::int64_t rows = a.shape.empty() ? 0 : a.shape[0];
  const std::size_t cols = rows > 0 ? a.values.size() / static_cast<std::size_t>(rows) : 0;
  a.scales.assign(static_cast<std::size_t>(rows), 1.0f);
  a.int8.assign(a.values.size(), 0);
  for (std::size_t r = 0; r < static_cast<std::size_t>(rows); ++r) {
    const float* row = a.values.data() + r * cols;
    float max_abs = 0.0f;
    for (std::size_t c = 0; c < cols; ++c) max_abs = std::max(max_abs, std::abs(row[c]));
    const float scale = max_abs / 127.0f;
    if (scale > 0.0f) a.scales[r] = scale;
    for (std::size_t c = 0; c < cols; ++c) {
      // torch::round rounds half to even, as nearbyint does in the default rounding mode.
      const float q = std::nearbyint(row[c] / a.scales[r]);
      a.int8[r * cols + c] = static_cast<std::int8_t>(std::clamp(q, -127.0f, 127.0f));
    }
  }
}

void write_int8_state(const std::string& path, const Int8State& state) {
  PayloadWriter w(path, kInt8Magic, kInt8PayloadVersion);
  w.str(state.engine);
  w.u64(state.tensors.size());
  for (const NamedArray& a : state.tensors) {
    const bool int8 = !a.int8.empty();
    w.str(a.name);
    w.u8(int8 ? kInt8 : kF32);
    write_shape(w, a);
    if (!int8) {
      w.f32_array(a.values.data(), a.values.size());
      continue;
    }
    w.f32_array(a.scales.data(), a.scales.size());
    w.str(std::string(reinterpret_cast<const char*>(a.int8.data()), a.int8.size()));
  }
  w.finish();
}

bool has_int8_weights(const Bundle& bundle) { return bundle.manifest().payloads.count(kInt8Payload) > 0; }

void refuse_int8_source(const Bundle& bundle) {
  if (has_int8_weights(bundle)) {
    throw UsageError(bundle.dir() + " holds int8 weights: compress the float bundle it was quantised from");
  }
}

}  // namespace newscls::bert
