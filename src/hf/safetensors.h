// Reader for the safetensors format that Hugging Face `save_pretrained` writes.
//
// Byte layout: u64 little-endian N, then N bytes of a UTF-8 JSON object (possibly padded with
// spaces), then the data buffer. Each JSON entry but "__metadata__" (an object of strings)
// describes one tensor: {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, the
// offsets counting from the start of the data buffer, row-major, little-endian elements.
//
// open() memory-maps the file and validates the whole index up front: a header past the end
// of the file, a non-object header, duplicate names, an unknown dtype, offsets out of range or
// overlapping, or a shape that disagrees with its byte count are refused with a
// ModelFormatError naming the file (gaps between tensors are tolerated). Integer dtypes are
// indexed (old checkpoints carry an I64 position_ids buffer); F32, F16, BF16 and F64 tensors
// are read as float32.
//
//   SafetensorsFile file = SafetensorsFile::open(dir + "/model.safetensors");
//   if (const TensorInfo* t = file.find("classifier.weight")) {
//     std::vector<float> w = file.read_floats(*t);   // t->shape == {labels, hidden}
//   }
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "hf/mapped_file.h"

namespace newscls::hf {

enum class DType { kBool, kU8, kI8, kI16, kU16, kF16, kBF16, kI32, kU32, kF32, kF64, kI64, kU64 };

// The spelling in safetensors headers ("F32") and the size of one element in bytes.
std::string_view dtype_name(DType dtype);
std::size_t dtype_size(DType dtype);

struct TensorInfo {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<std::int64_t> shape;
  std::size_t begin = 0;  // byte offsets into the data buffer, end exclusive
  std::size_t end = 0;

  std::int64_t numel() const;
};

// "[21128, 64]", for error messages.
std::string shape_string(const std::vector<std::int64_t>& shape);

class SafetensorsFile {
 public:
  static SafetensorsFile open(const std::string& path);

  const std::string& path() const { return file_.path(); }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // Every tensor, ordered by name.
  const std::map<std::string, TensorInfo>& tensors() const { return tensors_; }
  // nullptr when the file holds no tensor of that name.
  const TensorInfo* find(const std::string& name) const;

  // The tensor's elements as float32 (F16 and BF16 widened exactly); other dtypes are refused
  // with a ModelFormatError naming the file and tensor.
  std::vector<float> read_floats(const TensorInfo& tensor) const;
  // The raw little-endian bytes of a tensor.
  std::string_view raw_bytes(const TensorInfo& tensor) const;

 private:
  explicit SafetensorsFile(MappedFile file) : file_(std::move(file)) {}

  MappedFile file_;
  std::size_t data_start_ = 0;  // byte offset of the data buffer within the file
  std::map<std::string, std::string> metadata_;
  std::map<std::string, TensorInfo> tensors_;
};

// Exact widening of IEEE half and bfloat16 bit patterns, exposed for tests.
float half_to_float(std::uint16_t bits);
float bfloat16_to_float(std::uint16_t bits);

}  // namespace newscls::hf
