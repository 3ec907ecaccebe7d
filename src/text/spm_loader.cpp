#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>

#include "newscls/core/error.h"
#include "text/spm_backend.h"

namespace newscls {
namespace {

using CreateFn = SpmBackend* (*)();

std::string executable_dir() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  return std::filesystem::path(std::string(buf, static_cast<std::size_t>(n))).parent_path().string();
}

std::vector<std::string> candidate_paths() {
  std::vector<std::string> paths;
  if (const char* env = std::getenv("NEWSCLS_SPM_PLUGIN"); env != nullptr && *env != '\0') paths.push_back(env);
#ifdef NEWSCLS_SPM_PLUGIN_PATH
  paths.push_back(NEWSCLS_SPM_PLUGIN_PATH);
#endif
  paths.push_back(executable_dir() + "/libnewscls_spm.so");
  return paths;
}

// Loaded once per process and never unloaded: backends may live until exit.
CreateFn load_plugin() {
  std::string tried;
  for (const std::string& path : candidate_paths()) {
    if (!std::filesystem::exists(path)) {
      tried += " " + path;
      continue;
    }
#ifdef __SANITIZE_ADDRESS__
    // The sanitizer runtime aborts on RTLD_DEEPBIND, and without it the plugin's protobuf
    // would bind to LibTorch's: refuse cleanly instead.
    throw IoError(path, "the SentencePiece plugin cannot be loaded in an AddressSanitizer build");
#endif
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (handle == nullptr) throw IoError(path, std::string("cannot load the SentencePiece plugin: ") + dlerror());
    auto create = reinterpret_cast<CreateFn>(dlsym(handle, "newscls_spm_create"));
    if (create == nullptr) throw IoError(path, "no newscls_spm_create in the SentencePiece plugin");
    return create;
  }
  throw IoError("libnewscls_spm.so", "SentencePiece plugin not found (looked at" + tried + ")");
}

}  // namespace

std::unique_ptr<SpmBackend> make_spm_backend() {
  static const CreateFn create = load_plugin();
  return std::unique_ptr<SpmBackend>(create());
}

}  // namespace newscls
