// SHA-256 of files and strings, as lowercase hex; used for bundle payload checksums.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace newscls {

std::string sha256_hex(std::string_view data);
// Throws IoError when the file cannot be read.
std::string sha256_file_hex(const std::string& path);

// The digest of a stream fed piece by piece (a feed read from stdin, which cannot be read twice).
class Sha256Stream {
 public:
  Sha256Stream();
  ~Sha256Stream();
  Sha256Stream(const Sha256Stream&) = delete;
  Sha256Stream& operator=(const Sha256Stream&) = delete;
  void update(std::string_view data);
  // The digest of everything fed so far; the stream is finished after it.
  std::string hex();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace newscls
