#include "hf/safetensors.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "newscls/core/error.h"

namespace newscls::hf {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors data is little-endian");

using nlohmann::json;

// The safetensors library's own cap; a larger header is corruption, not a model.
constexpr std::uint64_t kMaxHeaderBytes = 100u << 20;

struct DTypeEntry {
  DType dtype;
  const char* name;
  std::size_t size;
};

constexpr DTypeEntry kDTypes[] = {
    {DType::kBool, "BOOL", 1}, {DType::kU8, "U8", 1},   {DType::kI8, "I8", 1},     {DType::kI16, "I16", 2},
    {DType::kU16, "U16", 2},   {DType::kF16, "F16", 2}, {DType::kBF16, "BF16", 2}, {DType::kI32, "I32", 4},
    {DType::kU32, "U32", 4},   {DType::kF32, "F32", 4}, {DType::kF64, "F64", 8},   {DType::kI64, "I64", 8},
    {DType::kU64, "U64", 8},
};

const DTypeEntry& entry_of(DType dtype) {
  for (const DTypeEntry& e : kDTypes) {
    if (e.dtype == dtype) return e;
  }
  return kDTypes[0];  // unreachable: every enumerator is listed
}

std::uint64_t read_u64_le(std::string_view bytes) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
  return v;
}

[[noreturn]] void refuse(const std::string& path, const std::string& message) { throw ModelFormatError(path, message); }

// Parses the header JSON, refusing a non-object and duplicate top-level names (nlohmann
// would silently keep the last one).
json parse_header(const std::string& path, std::string_view text) {
  std::set<std::string> seen;
  std::string duplicate;
  const json::parser_callback_t on_event = [&](int depth, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::key && depth == 1 && duplicate.empty() &&
        !seen.insert(parsed.get<std::string>()).second) {
      duplicate = parsed.get<std::string>();
    }
    return true;
  };
  json header;
  try {
    header = json::parse(text.begin(), text.end(), on_event);
  } catch (const json::exception& e) {
    refuse(path, std::string("safetensors header is not valid JSON: ") + e.what());
  }
  if (!header.is_object()) refuse(path, "safetensors header is not a JSON object");
  if (!duplicate.empty()) refuse(path, "safetensors header names tensor '" + duplicate + "' twice");
  return header;
}

DType parse_dtype(const std::string& path, const std::string& name, const json& value) {
  if (!value.is_string()) refuse(path, "tensor '" + name + "': dtype is not a string");
  const std::string text = value.get<std::string>();
  for (const DTypeEntry& e : kDTypes) {
    if (text == e.name) return e.dtype;
  }
  refuse(path, "tensor '" + name + "': unknown dtype '" + text + "'");
}

std::vector<std::uint64_t> parse_uints(const std::string& path, const std::string& what, const json& value) {
  if (!value.is_array()) refuse(path, what + " is not an array");
  std::vector<std::uint64_t> out;
  for (const json& v : value) {
    if (!v.is_number_unsigned()) refuse(path, what + " holds " + v.dump() + ", not a non-negative integer");
    out.push_back(v.get<std::uint64_t>());
  }
  return out;
}

TensorInfo parse_tensor(const std::string& path, const std::string& name, const json& entry, std::size_t buffer_size) {
  const std::string where = "tensor '" + name + "'";
  if (!entry.is_object()) refuse(path, where + " is not a JSON object");
  for (const char* key : {"dtype", "shape", "data_offsets"}) {
    if (!entry.contains(key)) refuse(path, where + " has no " + key);
  }
  TensorInfo t;
  t.name = name;
  t.dtype = parse_dtype(path, name, entry["dtype"]);
  // Element count with overflow checks: a lying shape must not wrap around to a small size.
  std::uint64_t count = 1;
  for (std::uint64_t dim : parse_uints(path, where + " shape", entry["shape"])) {
    if (dim > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) ||
        (dim != 0 && count > (std::numeric_limits<std::uint64_t>::max() >> 4) / dim)) {
      refuse(path, where + " has an impossibly large shape");
    }
    count *= dim;
    t.shape.push_back(static_cast<std::int64_t>(dim));
  }
  const std::vector<std::uint64_t> offsets = parse_uints(path, where + " data_offsets", entry["data_offsets"]);
  if (offsets.size() != 2) refuse(path, where + " data_offsets must hold two integers");
  if (offsets[0] > offsets[1] || offsets[1] > buffer_size) {
    refuse(path, where + " data_offsets [" + std::to_string(offsets[0]) + ", " + std::to_string(offsets[1]) +
                     "] fall outside the " + std::to_string(buffer_size) + "-byte data buffer");
  }
  t.begin = static_cast<std::size_t>(offsets[0]);
  t.end = static_cast<std::size_t>(offsets[1]);
  const std::uint64_t expected = count * dtype_size(t.dtype);
  if (t.end - t.begin != expected) {
    refuse(path, where + " has shape " + shape_string(t.shape) + " of " + std::string(dtype_name(t.dtype)) + " (" +
                     std::to_string(expected) + " bytes) but data_offsets span " + std::to_string(t.end - t.begin) +
                     " bytes");
  }
  return t;
}

std::map<std::string, std::string> parse_metadata(const std::string& path, const json& value) {
  if (!value.is_object()) refuse(path, "__metadata__ is not a JSON object");
  std::map<std::string, std::string> out;
  for (const auto& [key, v] : value.items()) {
    if (!v.is_string()) refuse(path, "__metadata__ value of '" + key + "' is not a string");
    out[key] = v.get<std::string>();
  }
  return out;
}

// No two tensors share bytes, and nothing follows the last one (bytes appended to the file,
// which the safetensors library refuses too). A hole is left to the loader, which names the
// tensor missing from the header.
void check_tiling(const std::string& path, const std::map<std::string, TensorInfo>& tensors, std::size_t buffer_size) {
  std::vector<const TensorInfo*> spans;
  for (const auto& [name, t] : tensors) {
    if (t.end > t.begin) spans.push_back(&t);
  }
  std::sort(spans.begin(), spans.end(), [](const TensorInfo* a, const TensorInfo* b) { return a->begin < b->begin; });
  std::uint64_t covered = 0;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (spans[i]->begin < covered) {
      refuse(path, "tensors '" + spans[i - 1]->name + "' and '" + spans[i]->name + "' overlap in the data buffer");
    }
    covered = spans[i]->end;
  }
  if (covered != buffer_size) {
    refuse(path, std::to_string(buffer_size - covered) + " bytes after the last tensor belong to no tensor");
  }
}

}  // namespace

std::string_view dtype_name(DType dtype) { return entry_of(dtype).name; }
std::size_t dtype_size(DType dtype) { return entry_of(dtype).size; }

std::int64_t TensorInfo::numel() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

std::string shape_string(const std::vector<std::int64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  SafetensorsFile file(MappedFile::open(path));
  const std::string_view bytes = file.file_.bytes();
  if (bytes.size() < 8) refuse(path, "too short for a safetensors file (" + std::to_string(bytes.size()) + " bytes)");
  const std::uint64_t header_len = read_u64_le(bytes);
  if (header_len > bytes.size() - 8) {
    refuse(path, "safetensors header length " + std::to_string(header_len) + " runs past the end of the " +
                     std::to_string(bytes.size()) + "-byte file");
  }
  if (header_len > kMaxHeaderBytes) refuse(path, "safetensors header over 100 MB");
  file.data_start_ = 8 + static_cast<std::size_t>(header_len);
  const std::size_t buffer_size = bytes.size() - file.data_start_;
  const json header = parse_header(path, bytes.substr(8, static_cast<std::size_t>(header_len)));
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      file.metadata_ = parse_metadata(path, entry);
    } else {
      file.tensors_.emplace(name, parse_tensor(path, name, entry, buffer_size));
    }
  }
  check_tiling(path, file.tensors_, buffer_size);
  return file;
}

const TensorInfo* SafetensorsFile::find(const std::string& name) const {
  const auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

std::string_view SafetensorsFile::raw_bytes(const TensorInfo& tensor) const {
  return file_.bytes().substr(data_start_ + tensor.begin, tensor.end - tensor.begin);
}

std::vector<float> SafetensorsFile::read_floats(const TensorInfo& tensor) const {
  const std::string_view raw = raw_bytes(tensor);
  const auto* p = reinterpret_cast<const unsigned char*>(raw.data());
  const std::size_t n = static_cast<std::size_t>(tensor.numel());
  std::vector<float> out(n);
  const auto u16_at = [p](std::size_t i) { return static_cast<std::uint16_t>(p[2 * i] | (p[2 * i + 1] << 8)); };
  switch (tensor.dtype) {
    case DType::kF32:
      if (n > 0) std::memcpy(out.data(), p, n * sizeof(float));
      break;
    case DType::kF16:
      for (std::size_t i = 0; i < n; ++i) out[i] = half_to_float(u16_at(i));
      break;
    case DType::kBF16:
      for (std::size_t i = 0; i < n; ++i) out[i] = bfloat16_to_float(u16_at(i));
      break;
    case DType::kF64:
      for (std::size_t i = 0; i < n; ++i) {
        double d;
        std::memcpy(&d, p + 8 * i, sizeof d);
        out[i] = static_cast<float>(d);
      }
      break;
    default:
      refuse(path(), "tensor '" + tensor.name + "' has dtype " + std::string(dtype_name(tensor.dtype)) +
                         "; only F32, F16, BF16 and F64 can be read as floats");
  }
  return out;
}

float half_to_float(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits >> 15) << 31;
  const std::uint32_t exponent = (bits >> 10) & 0x1Fu;
  const std::uint32_t mantissa = bits & 0x3FFu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in float
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  const std::uint32_t out_bits = exponent == 0x1F ? (sign | 0x7F800000u | (mantissa << 13))
                                                  : (sign | ((exponent + 112u) << 23) | (mantissa << 13));
  float f;
  std::memcpy(&f, &out_bits, sizeof f);
  return f;
}

float bfloat16_to_float(std::uint16_t bits) {
  const std::uint32_t out_bits = static_cast<std::uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &out_bits, sizeof f);
  return f;
}

}  // namespace newscls::hf
