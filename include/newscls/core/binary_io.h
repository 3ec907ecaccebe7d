// Field-by-field little-endian binary payloads with a magic and a format version.
//
// Layout of every payload written through PayloadWriter:
//   bytes 0..3   magic (4 ASCII bytes, e.g. "NCRF")
//   bytes 4..7   u32 format version
//   then fields: u8/u32/u64/i32 little-endian, f32/f64 as IEEE-754 little-endian,
//   strings as u64 byte length + bytes, arrays as u64 count + elements.
// Readers throw ModelFormatError naming the file on a wrong magic, a version newer than
// supported (naming both), or a truncated field; never read past the end.
//
//   PayloadWriter w(path_in_tmp_bundle, "NCRF", 1); w.u32(n); w.f32_array(v); w.finish();
//   PayloadReader r(path, "NCRF", 1); uint32_t n = r.u32(); r.expect_end();
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace newscls {

class PayloadWriter {
 public:
  PayloadWriter(const std::string& path, const char magic[4], std::uint32_t version);
  ~PayloadWriter();
  PayloadWriter(const PayloadWriter&) = delete;
  PayloadWriter& operator=(const PayloadWriter&) = delete;

  void u8(std::uint8_t v);
  void u32(std::uint32_t v);
  void u64(std::uint64_t v);
  void i32(std::int32_t v);
  void f32(float v);
  void f64(double v);
  void str(const std::string& s);
  void f32_array(const float* data, std::size_t n);
  void f32_array(const std::vector<float>& v) { f32_array(v.data(), v.size()); }
  void i32_array(const std::vector<std::int32_t>& v);
  void u32_array(const std::vector<std::uint32_t>& v);
  // Flushes and closes; throws IoError on any write failure.
  void finish();

 private:
  void bytes(const void* p, std::size_t n);
  void maybe_flush();
  std::string path_;
  std::FILE* file_ = nullptr;
  std::vector<unsigned char> buffer_;
};

class PayloadReader {
 public:
  // Reads the whole file; checks magic and version (max_version is the newest supported).
  PayloadReader(const std::string& path, const char magic[4], std::uint32_t max_version);
  std::uint32_t version() const { return version_; }

  std::uint8_t u8();
  std::uint32_t u32();
  std::uint64_t u64();
  std::int32_t i32();
  float f32();
  double f64();
  std::string str();
  std::vector<float> f32_array();
  std::vector<std::int32_t> i32_array();
  std::vector<std::uint32_t> u32_array();
  // A count read from the file, checked against what the remaining bytes can hold.
  std::uint64_t count(std::size_t element_size);
  void expect_end() const;
  const std::string& path() const { return path_; }

 private:
  void bytes(void* p, std::size_t n);
  std::string path_;
  std::vector<unsigned char> data_;
  std::size_t pos_ = 0;
  std::uint32_t version_ = 0;
};

}  // namespace newscls
