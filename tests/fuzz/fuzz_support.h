// Shared helpers for the libFuzzer targets: a per-process scratch directory (on /dev/shm
// when it exists, so writing the input to a file each run stays cheap), and a check that
// aborts, which libFuzzer reports as a finding with the input that caused it.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#define NEWSCLS_FUZZ_CHECK(cond)                                                        \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      std::fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                     \
    }                                                                                   \
  } while (0)

namespace newscls::fuzz {

inline void remove_scratch_dir();

inline const std::string& scratch_dir() {
  // Never destroyed, so the atexit cleanup can still read it.
  static const std::string* dir = [] {
    const std::filesystem::path base =
        std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : std::filesystem::temp_directory_path();
    const std::filesystem::path d = base / ("newscls-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    auto* path = new std::string(d.string());
    std::atexit(remove_scratch_dir);
    return path;
  }();
  return *dir;
}

inline void remove_scratch_dir() {
  std::error_code ec;
  std::filesystem::remove_all(scratch_dir(), ec);
}

inline std::string write_file(const std::string& path, std::string_view bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();  // the harness itself failed, not the code under test
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) std::abort();
  std::fclose(f);
  return path;
}

// Writes the input to <scratch>/<name> and returns the path.
inline std::string write_input(const std::string& name, const std::uint8_t* data, std::size_t size) {
  return write_file(scratch_dir() + "/" + name, std::string_view(reinterpret_cast<const char*>(data), size));
}

}  // namespace newscls::fuzz
