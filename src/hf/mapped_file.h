// A read-only memory map of a whole file, so multi-hundred-megabyte checkpoints are paged in
// on demand instead of copied. Move-only; the map lives as long as the object.
//
//   MappedFile f = MappedFile::open("model.safetensors");   // IoError when unreadable
//   std::string_view bytes = f.bytes();
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace newscls::hf {

class MappedFile {
 public:
  static MappedFile open(const std::string& path);
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  const std::string& path() const { return path_; }
  std::string_view bytes() const { return {static_cast<const char*>(data_), size_}; }
  std::size_t size() const { return size_; }

 private:
  MappedFile(std::string path, void* data, std::size_t size);
  void release();

  std::string path_;
  void* data_ = nullptr;  // nullptr for an empty file (mmap refuses length 0)
  std::size_t size_ = 0;
};

}  // namespace newscls::hf
