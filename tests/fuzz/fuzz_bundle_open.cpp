// Fuzzes Bundle::open on a directory built from the input: the bytes before the first NUL
// become manifest.json, the bytes after it the payload "p.bin". Opening either verifies
// every listed payload (present, checksum equal) or throws ModelFormatError.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "newscls/core/bundle.h"
#include "newscls/core/error.h"
#include "newscls/core/sha256.h"

namespace fs = std::filesystem;

namespace {

std::string bundle_dir() {
  static const std::string* dir = new std::string(newscls::fuzz::scratch_dir() + "/bundle");
  return *dir;
}

void write_bundle(std::string_view input) {
  const std::string dir = bundle_dir();
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir);
  const std::size_t nul = input.find('\0');
  newscls::fuzz::write_file(dir + "/manifest.json", input.substr(0, nul));
  if (nul != std::string_view::npos) newscls::fuzz::write_file(dir + "/p.bin", input.substr(nul + 1));
}

void check_opened(const newscls::Bundle& bundle) {
  const newscls::Manifest& m = bundle.manifest();
  NEWSCLS_FUZZ_CHECK(m.labels.size() >= 2);
  for (const auto& [name, sha] : m.payloads) {
    const std::string path = bundle.payload_path(name);
    NEWSCLS_FUZZ_CHECK(fs::path(path).parent_path() == fs::path(bundle_dir()));
    NEWSCLS_FUZZ_CHECK(fs::is_regular_file(path));
    NEWSCLS_FUZZ_CHECK(newscls::sha256_file_hex(path) == sha);
  }
  try {
    bundle.payload_path("not-listed.bin");
    NEWSCLS_FUZZ_CHECK(m.payloads.count("not-listed.bin") == 1);
  } catch (const newscls::ModelFormatError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  write_bundle(std::string_view(reinterpret_cast<const char*>(data), size));
  try {
    check_opened(newscls::Bundle::open(bundle_dir()));
  } catch (const newscls::ModelFormatError&) {
  }
  return 0;
}
