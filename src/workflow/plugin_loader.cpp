#include "workflow/plugin_loader.h"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "newscls/core/error.h"

namespace newscls {
namespace {

bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0';
}

void tune_blas_before_load() {
  if (env_set("OPENBLAS_CORETYPE") || env_set("NEWSCLS_NO_BLAS_TUNING")) return;
  if (const char* core = best_openblas_core()) {
    setenv("OPENBLAS_CORETYPE", core, 1);
    spdlog::debug("OPENBLAS_CORETYPE={} (from the CPU's features)", core);
  }
}

// The build records where the plugin was built; a copied tool finds it next to itself.
std::string plugin_path(const std::string& built_at) {
  if (std::filesystem::exists(built_at)) return built_at;
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return built_at;
  self[n] = '\0';
  const auto beside = std::filesystem::path(self).parent_path() / std::filesystem::path(built_at).filename();
  return std::filesystem::exists(beside) ? beside.string() : built_at;
}

}  // namespace

const char* best_openblas_core() {
  __builtin_cpu_init();
  // A kernel the CPU lacks crashes, so every instruction set it uses is checked.
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512cd")) {
    return "SkylakeX";
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
  return nullptr;
}

const Family& load_family_plugin(const std::string& name, const std::string& built_at) {
  tune_blas_before_load();
  const std::string path = plugin_path(built_at);
  // Never closed: the family's objects live until the process ends.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    throw IoError(path, "cannot load model family '" + name + "': " + std::string(dlerror()));
  }
  using Entry = const Family* (*)();
  auto entry = reinterpret_cast<Entry>(dlsym(handle, "newscls_family"));
  const Family* family = entry ? entry() : nullptr;
  if (family == nullptr || family->name() != name) {
    throw IoError(path, "is not the plugin of model family '" + name + "'");
  }
  spdlog::debug("model family {} loaded from {}", name, path);
  return *family;
}

}  // namespace newscls
