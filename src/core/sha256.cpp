// SHA-256 by OpenSSL's libcrypto: it uses the CPU's SHA extensions where there are any, and
// every bundle load hashes its payloads (a bert bundle's 42 MB took 0.21 s with the portable
// loop this replaced, 0.04 s here).
#include "newscls/core/sha256.h"

#include <openssl/evp.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "newscls/core/error.h"

namespace newscls {
namespace {

void check(bool ok, const char* step) {
  if (!ok) throw Error(ErrorKind::kIo, std::string("sha256: OpenSSL's ") + step + " failed");
}

class Sha256 {
 public:
  Sha256() : ctx_(EVP_MD_CTX_new(), EVP_MD_CTX_free) {
    check(ctx_ && EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) == 1, "init");
  }

  void update(const void* p, std::size_t n) { check(EVP_DigestUpdate(ctx_.get(), p, n) == 1, "update"); }

  std::string hex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    check(EVP_DigestFinal_ex(ctx_.get(), digest, &size) == 1, "final");
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    for (unsigned int i = 0; i < size; ++i) out += kDigits[digest[i] >> 4], out += kDigits[digest[i] & 15];
    return out;
  }

 private:
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx_;
};

}  // namespace

struct Sha256Stream::Impl {
  Sha256 digest;
};

Sha256Stream::Sha256Stream() : impl_(std::make_unique<Impl>()) {}
Sha256Stream::~Sha256Stream() = default;
void Sha256Stream::update(std::string_view data) { impl_->digest.update(data.data(), data.size()); }
std::string Sha256Stream::hex() { return impl_->digest.hex(); }

std::string sha256_hex(std::string_view data) {
  Sha256 h;
  h.update(data.data(), data.size());
  return h.hex();
}

std::string sha256_file_hex(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) throw IoError(path, std::string("cannot open: ") + std::strerror(errno));
  Sha256 h;
  unsigned char buf[1 << 16];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) h.update(buf, n);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) throw IoError(path, "read failed");
  return h.hex();
}

}  // namespace newscls
