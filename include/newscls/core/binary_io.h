// Field-by-field little-endian binary payloads with a magic and a format version, and blocks:
// large arrays a reader hands out where they lie in the file's bytes, without parsing them.
//
// Layout of every payload written through PayloadWriter:
//   bytes 0..3   magic (4 ASCII bytes, e.g. "NCRF")
//   bytes 4..7   u32 format version
//   then fields: u8/u32/u64/i32 little-endian, f32/f64 as IEEE-754 little-endian,
//   strings as u64 byte length + bytes, arrays as u64 count + elements,
//   and blocks: raw little-endian elements without a count (the payload's header gives it),
//   starting at a file offset that is a multiple of the element size, zero bytes before it.
// Readers throw ModelFormatError naming the file on a wrong magic, a version newer than
// supported (naming both), a truncated field or block, or non-zero padding; never read past
// the end.
//
//   PayloadWriter w(path_in_tmp_bundle, "NCRF", 1); w.u32(n); w.f32_array(v); w.finish();
//   PayloadReader r(path, "NCRF", 1); uint32_t n = r.u32(); r.expect_end();
//   w.u64(v.size()); w.block(v);   ...   PayloadArray<float> a = r.block<float>(r.u64());
//
// A reader reads the whole file with one read() (not mmap: a long-lived server must survive its
// file being rewritten in place), and a block stays in memory as long as a PayloadArray of it
// lives: loading a model's tables costs one bulk read and a pass of checks, not parsing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace newscls {

// A read-only array that owns its elements (a model built in memory) or views a block of a
// payload read from disk, whose bytes it keeps alive. Copies share the elements.
template <typename T>
class PayloadArray {
 public:
  PayloadArray() = default;
  // Implicit, so that code building a model assigns its vectors as before.
  PayloadArray(std::vector<T> values) {  // NOLINT(google-explicit-constructor)
    auto owned = std::make_shared<const std::vector<T>>(std::move(values));
    data_ = owned->data();
    size_ = owned->size();
    owner_ = std::move(owned);
  }
  PayloadArray(std::shared_ptr<const void> owner, const T* data, std::size_t size)
      : owner_(std::move(owner)), data_(data), size_(size) {}

  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }

 private:
  std::shared_ptr<const void> owner_;
  const T* data_ = nullptr;
  std::size_t size_ = 0;
};

// True when the offsets (n + 1 of them, n strings) start at 0, never decrease and end at
// `bytes`: then every string they delimit lies inside a block of that many bytes. One
// branch-free pass, run before any string is read.
bool offsets_delimit(const PayloadArray<std::uint32_t>& offsets, std::uint64_t bytes);

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
  // A block of n elements (T: a fixed-size integer or float), after zero padding up to a
  // multiple of sizeof(T); the reader must learn n from a field written before it.
  template <typename T>
  void block(const T* data, std::size_t n) {
    raw_block(data, n * sizeof(T), sizeof(T));
  }
  template <typename T>
  void block(const std::vector<T>& v) {
    block(v.data(), v.size());
  }
  template <typename T>
  void block(const PayloadArray<T>& a) {
    block(a.data(), a.size());
  }
  // Flushes and closes; throws IoError on any write failure.
  void finish();

 private:
  void bytes(const void* p, std::size_t n);
  void raw_block(const void* p, std::size_t n, std::size_t alignment);
  void flush();
  void maybe_flush();
  std::string path_;
  std::FILE* file_ = nullptr;
  std::vector<unsigned char> buffer_;
  std::uint64_t flushed_ = 0;  // bytes already written to the file
};

// The bytes of a payload file, read whole.
struct PayloadFile;

class PayloadReader {
 public:
  // Reads the file; checks magic and version (max_version is the newest supported).
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
  // The next block of n elements, where it lies in the file (see PayloadWriter::block).
  template <typename T>
  PayloadArray<T> block(std::uint64_t n) {
    const void* p = raw_block(n, sizeof(T));
    return PayloadArray<T>(file_, static_cast<const T*>(p), static_cast<std::size_t>(n));
  }
  void expect_end() const;
  const std::string& path() const { return path_; }

 private:
  void bytes(void* p, std::size_t n);
  const void* raw_block(std::uint64_t n, std::size_t element_size);
  template <typename T>
  std::vector<T> array();
  std::string path_;
  std::shared_ptr<const PayloadFile> file_;
  const unsigned char* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t pos_ = 0;
  std::uint32_t version_ = 0;
};

}  // namespace newscls
