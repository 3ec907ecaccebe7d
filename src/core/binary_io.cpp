#include "newscls/core/binary_io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "newscls/core/atomic_file.h"
#include "newscls/core/error.h"

// Arrays and blocks are copied or viewed as they lie: the payloads are little-endian.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "payload I/O assumes a little-endian host");

namespace newscls {
namespace {

constexpr std::size_t kFlushBytes = 1 << 20;
constexpr unsigned char kZeros[16] = {};

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

std::size_t padding_before(std::uint64_t offset, std::size_t alignment) {
  return static_cast<std::size_t>((alignment - offset % alignment) % alignment);
}

}  // namespace

// The file is read into memory with one read() of its size, not mapped: a server holds its model
// for days, and a mapped file rewritten in place (cp over it, a truncating editor) would kill it
// with SIGBUS. Reading 30 MB from the page cache costs a few milliseconds.
struct PayloadFile {
  explicit PayloadFile(const std::string& path);
  PayloadFile(const PayloadFile&) = delete;
  PayloadFile& operator=(const PayloadFile&) = delete;

  ~PayloadFile() {
    if (owned != nullptr) ::munmap(owned, owned_size);
  }
  void* owned = nullptr;  // page-aligned anonymous memory the file was read into
  std::size_t owned_size = 0;
  std::string content;  // what a pipe or /dev/stdin gave
  const unsigned char* data = nullptr;
  std::size_t size = 0;
};

namespace {

// Reads exactly n bytes; false when the file ended early or changed size under us.
bool read_exactly(int fd, unsigned char* out, std::size_t n) {
  std::size_t done = 0;
  while (done < n) {
    const ssize_t got = ::read(fd, out + done, n - done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    done += static_cast<std::size_t>(got);
  }
  return true;
}

}  // namespace

PayloadFile::PayloadFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    size = static_cast<std::size_t>(st.st_size);
    // Anonymous memory on huge pages where the kernel allows them: faulting 4 KiB pages in one
    // at a time, and their TLB misses when the checks read them, cost more than the read.
    owned_size = size > 0 ? size : 1;
    owned = ::mmap(nullptr, owned_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (owned == MAP_FAILED) {
      owned = nullptr;
      ::close(fd);
      throw IoError(path, std::string("cannot allocate memory to read it: ") + std::strerror(errno));
    }
    ::madvise(owned, owned_size, MADV_HUGEPAGE);  // advice only: no error to handle
    errno = 0;
    const bool ok = read_exactly(fd, static_cast<unsigned char*>(owned), size);
    const int saved_errno = errno;
    ::close(fd);
    if (!ok) {
      throw IoError(path, saved_errno != 0 ? std::string("read failed: ") + std::strerror(saved_errno)
                                           : "read failed: the file changed while it was read");
    }
    data = static_cast<const unsigned char*>(owned);
    return;
  }
  ::close(fd);
  content = read_file(path);
  data = reinterpret_cast<const unsigned char*>(content.data());
  size = content.size();
}

bool offsets_delimit(const PayloadArray<std::uint32_t>& offsets, std::uint64_t bytes) {
  if (offsets.empty() || offsets[0] != 0 || offsets[offsets.size() - 1] != bytes) return false;
  unsigned decreasing = 0;
  for (std::size_t i = 1; i < offsets.size(); ++i) decreasing |= static_cast<unsigned>(offsets[i] < offsets[i - 1]);
  return decreasing == 0;
}

PayloadWriter::PayloadWriter(const std::string& path, const char magic[4], std::uint32_t version) : path_(path) {
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

void PayloadWriter::flush() {
  if (std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size()) {
    throw IoError(path_, std::string("write failed: ") + std::strerror(errno));
  }
  flushed_ += buffer_.size();
  buffer_.clear();
}

void PayloadWriter::maybe_flush() {
  if (buffer_.size() >= kFlushBytes) flush();
}

void PayloadWriter::raw_block(const void* p, std::size_t n, std::size_t alignment) {
  bytes(kZeros, padding_before(flushed_ + buffer_.size(), alignment));
  if (n < kFlushBytes) {
    bytes(p, n);
    return;
  }
  flush();  // a large block goes to the file as it is, not through the buffer
  if (std::fwrite(p, 1, n, file_) != n) throw IoError(path_, std::string("write failed: ") + std::strerror(errno));
  flushed_ += n;
}

void PayloadWriter::u8(std::uint8_t v) { bytes(&v, 1); }
void PayloadWriter::u32(std::uint32_t v) {
  put_le(buffer_, v);
  maybe_flush();
}
void PayloadWriter::u64(std::uint64_t v) {
  put_le(buffer_, v);
  maybe_flush();
}
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
  bytes(data, 4 * n);
}

void PayloadWriter::i32_array(const std::vector<std::int32_t>& v) {
  u64(v.size());
  bytes(v.data(), 4 * v.size());
}

void PayloadWriter::u32_array(const std::vector<std::uint32_t>& v) {
  u64(v.size());
  bytes(v.data(), 4 * v.size());
}

void PayloadWriter::finish() {
  const bool ok = std::fwrite(buffer_.data(), 1, buffer_.size(), file_) == buffer_.size() && std::fflush(file_) == 0;
  const int close_status = std::fclose(file_);
  file_ = nullptr;
  if (!ok || close_status != 0) throw IoError(path_, std::string("write failed: ") + std::strerror(errno));
}

PayloadReader::PayloadReader(const std::string& path, const char magic[4], std::uint32_t max_version)
    : path_(path), file_(std::make_shared<const PayloadFile>(path)), data_(file_->data), size_(file_->size) {
  if (size_ < 8 || std::memcmp(data_, magic, 4) != 0) {
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
  if (n > size_ - pos_) {
    throw ModelFormatError(path_, "truncated: needed " + std::to_string(n) + " bytes at offset " +
                                      std::to_string(pos_) + ", file has " + std::to_string(size_));
  }
  if (n > 0) std::memcpy(p, data_ + pos_, n);
  pos_ += n;
}

const void* PayloadReader::raw_block(std::uint64_t n, std::size_t element_size) {
  const std::size_t padding = padding_before(pos_, element_size);
  if (padding > size_ - pos_ || n > (size_ - pos_ - padding) / element_size) {
    throw ModelFormatError(path_, "truncated: a block of " + std::to_string(n) + " elements at offset " +
                                      std::to_string(pos_) + " exceeds the file (" + std::to_string(size_) + " bytes)");
  }
  if (std::memcmp(data_ + pos_, kZeros, padding) != 0) {
    throw ModelFormatError(path_, "corrupt: non-zero padding at offset " + std::to_string(pos_));
  }
  pos_ += padding;
  const void* block = data_ + pos_;
  pos_ += static_cast<std::size_t>(n) * element_size;
  return block;
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
  if (element_size > 0 && n > (size_ - pos_) / element_size) {
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

template <typename T>
std::vector<T> PayloadReader::array() {
  const std::uint64_t n = count(sizeof(T));
  std::vector<T> v(n);
  bytes(v.data(), n * sizeof(T));
  return v;
}

std::vector<float> PayloadReader::f32_array() { return array<float>(); }
std::vector<std::int32_t> PayloadReader::i32_array() { return array<std::int32_t>(); }
std::vector<std::uint32_t> PayloadReader::u32_array() { return array<std::uint32_t>(); }

void PayloadReader::expect_end() const {
  if (pos_ != size_) {
    throw ModelFormatError(path_, "corrupt: " + std::to_string(size_ - pos_) + " unexpected trailing bytes");
  }
}

}  // namespace newscls
