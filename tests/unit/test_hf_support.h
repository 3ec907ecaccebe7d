// Helpers for the Hugging Face tests: a small safetensors writer, so hostile and hand-made
// checkpoints are built in the test itself, and the location of the shared reference files.
#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_support.h"

namespace newscls::testing {

struct StTensor {
  std::string name;
  std::string dtype;  // "F32", "F16", ...
  std::vector<std::int64_t> shape;
  std::string bytes;  // little-endian payload
};

inline std::string f32_bytes(const std::vector<float>& values) {
  std::string out(values.size() * 4, '\0');
  if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

// A tensor of the given shape whose elements are 0, 1, 2, ... as F32.
inline StTensor f32_tensor(const std::string& name, const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  std::vector<float> values(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  return {name, "F32", shape, f32_bytes(values)};
}

inline std::string u64_le(std::uint64_t v) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xFF);
  return out;
}

// A header text plus data buffer as one safetensors image.
inline std::string safetensors_image(const std::string& header, const std::string& data) {
  return u64_le(header.size()) + header + data;
}

// Tensors laid out one after another, with honest offsets.
inline std::string safetensors_image(const std::vector<StTensor>& tensors) {
  nlohmann::json header = nlohmann::json::object();
  header["__metadata__"] = {{"format", "pt"}};
  std::string data;
  for (const StTensor& t : tensors) {
    header[t.name] = {
        {"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {data.size(), data.size() + t.bytes.size()}}};
    data += t.bytes;
  }
  return safetensors_image(header.dump(), data);
}

inline std::string hf_fixture(const std::string& name) { return source_dir() + "/tests/fixtures/hf/" + name; }

// The tiny classifier checkpoint (bert-tiny-cls) as save_pretrained writes it, with the vocabulary
// beside it, in a new folder `dir`.
inline void copy_tiny_hf_classifier(const std::string& dir) {
  std::filesystem::create_directories(dir);
  for (const char* f : {"config.json", "model.safetensors"}) {
    std::filesystem::copy_file(hf_fixture("bert-tiny-cls/") + f, dir + "/" + f);
  }
  std::filesystem::copy_file(hf_fixture("vocab.txt"), dir + "/vocab.txt");
}

// One line naming the file: what every refusal of a hostile file must look like.
inline bool one_line_naming(const std::string& message, const std::string& path) {
  return message.find('\n') == std::string::npos && message.find(path) != std::string::npos;
}

}  // namespace newscls::testing
