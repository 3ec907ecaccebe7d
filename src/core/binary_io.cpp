#include "newscls/core/binary_io.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "newscls/core/atomic_file.h"
#include "newscls/core/error.h"

namespace newscls {
namespace {

constexpr std::size_t kFlushBytes = 1 << 20;

template <typename T>
void put_le(std::vector<unsigned char>& out, T v) {
  for (std::size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<unsigned char>(v >> (8 * i)));
}

template <typename T>
T get_le(const unsigned char* p) {
  T v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) v |= static_cast<T>(p[i]) << (8 * i);
  return v;
}

std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

}  // namespace

PayloadWriter::PayloadWriter(const std::string& path, const char magic[4], std::uint32_t version)
    : path_(path) {
  file_ = std::fopen(path.c_str(), "wb");
  if (file_ == nullptr) throw IoError(path, std::string("cannot create: ") + std::strerror(errno));
  bytes(magic, 4);
  u32(version);
}

PayloadWriter::~PayloadWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void PayloadWriter::bytes(const void* p, std::size_t n) {
  const auto* c = static_cast<const unsigned char*>(p);
  buffer_.insert(buffer_.end(), c, c + n);
  maybe_flush();
}

void PayloadWriter::maybe_flush() {
  if (buffer_.size() >= kFlushBytes) {
    if (std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size()) {
      throw IoError(path_, std::string("write failed: ") + std::strerror(errno));
    }
    buffer_.clear();
  }
}

void PayloadWriter::u8(std::uint8_t v) { bytes(&v, 1); }
void PayloadWriter::u32(std::uint32_t v) { put_le(buffer_, v); maybe_flush(); }
void PayloadWriter::u64(std::uint64_t v) { put_le(buffer_, v); maybe_flush(); }
void PayloadWriter::i32(std::int32_t v) { u32(static_cast<std::uint32_t>(v)); }
void PayloadWriter::f32(float v) { u32(float_bits(v)); }
void PayloadWriter::f64(double v) {
  std::uint64_t u;
  std::memcpy(&u, &v, 8);
  u64(u);
}

void PayloadWriter::str(const std::string& s) {
  u64(s.size());
  bytes(s.data(), s.size());
}

void PayloadWriter::f32_array(const float* data, std::size_t n) {
  u64(n);
  buffer_.reserve(buffer_.size() + 4 * n);
  for (std::size_t i = 0; i < n; ++i) put_le(buffer_, float_bits(data[i]));
  maybe_flush();
}

void PayloadWriter::i32_array(const std::vector<std::int32_t>& v) {
  u64(v.size());
  for (std::int32_t x : v) put_le(buffer_, static_cast<std::uint32_t>(x));
  maybe_flush();
}

void PayloadWriter::u32_array(const std::vector<std::uint32_t>& v) {
  u64(v.size());
  for (std::uint32_t x : v) put_le(buffer_, x);
  maybe_flush();
}

void PayloadWriter::finish() {
  const bool ok = std::fwrite(buffer_.data(), 1, buffer_.size(), file_) == buffer_.size() &&
                  std::fflush(file_) == 0;
  const int close_status = std::fclose(file_);
  file_ = nullptr;
  if (!ok || close_status != 0) throw IoError(path_, std::string("write failed: ") + std::strerror(errno));
}

PayloadReader::PayloadReader(const std::string& path, const char magic[4], std::uint32_t max_version)
    : path_(path) {
  const std::string content = read_file(path);
  data_.assign(content.begin(), content.end());
  if (data_.size() < 8 || std::memcmp(data_.data(), magic, 4) != 0) {
    throw ModelFormatError(path, "not a " + std::string(magic, 4) + " payload (bad magic or truncated)");
  }
  pos_ = 4;
  version_ = u32();
  if (version_ > max_version) {
    throw ModelFormatError(path, "payload format version " + std::to_string(version_) +
                                     " is newer than this newscls supports (" + std::to_string(max_version) +
                                     "); upgrade newscls");
  }
}

void PayloadReader::bytes(void* p, std::size_t n) {
  if (n > data_.size() - pos_) {
    throw ModelFormatError(path_, "truncated: needed " + std::to_string(n) + " bytes at offset " +
                                      std::to_string(pos_) + ", file has " + std::to_string(data_.size()));
  }
  if (n > 0) std::memcpy(p, data_.data() + pos_, n);
  pos_ += n;
}

std::uint8_t PayloadReader::u8() {
  std::uint8_t v;
  bytes(&v, 1);
  return v;
}

std::uint32_t PayloadReader::u32() {
  unsigned char b[4];
  bytes(b, 4);
  return get_le<std::uint32_t>(b);
}

std::uint64_t PayloadReader::u64() {
  unsigned char b[8];
  bytes(b, 8);
  return get_le<std::uint64_t>(b);
}

std::int32_t PayloadReader::i32() { return static_cast<std::int32_t>(u32()); }

float PayloadReader::f32() {
  const std::uint32_t u = u32();
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

double PayloadReader::f64() {
  const std::uint64_t u = u64();
  double d;
  std::memcpy(&d, &u, 8);
  return d;
}

std::uint64_t PayloadReader::count(std::size_t element_size) {
  const std::uint64_t n = u64();
  if (element_size > 0 && n > (data_.size() - pos_) / element_size) {
    throw ModelFormatError(path_, "truncated or corrupt: a count of " + std::to_string(n) + " at offset " +
                                      std::to_string(pos_ - 8) + " exceeds the file");
  }
  return n;
}

std::string PayloadReader::str() {
  const std::uint64_t n = count(1);
  std::string s(n, '\0');
  bytes(s.data(), n);
  return s;
}

std::vector<float> PayloadReader::f32_array() {
  const std::uint64_t n = count(4);
  std::vector<float> v(n);
  for (auto& x : v) x = f32();
  return v;
}

std::vector<std::int32_t> PayloadReader::i32_array() {
  const std::uint64_t n = count(4);
  std::vector<std::int32_t> v(n);
  for (auto& x : v) x = i32();
  return v;
}

std::vector<std::uint32_t> PayloadReader::u32_array() {
  const std::uint64_t n = count(4);
  std::vector<std::uint32_t> v(n);
  for (auto& x : v) x = u32();
  return v;
}

void PayloadReader::expect_end() const {
  if (pos_ != data_.size()) {
    throw ModelFormatError(path_, "corrupt: " + std::to_string(data_.size() - pos_) + " unexpected trailing bytes");
  }
}

}  // namespace newscls
