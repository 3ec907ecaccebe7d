#include "workflow/plugin_loader.h"

#include <cstdlib>

#include <spdlog/spdlog.h>

#include "newscls/core/error.h"
#include "newscls/core/shared_library.h"

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

}  // namespace

const char* best_openblas_core() {
  __builtin_cpu_init();
  // A kernel the CPU lacks crashes, so every instruction set it uses is checked.
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512cd")) {
    return "SkylakeX";
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
  return nullptr;
}

const Family& load_family_plugin(const std::string& name, const std::string& built_at) {
  tune_blas_before_load();
  const std::string path = library_beside_tool(built_at);
  using Entry = const Family* (*)();
  auto entry = reinterpret_cast<Entry>(library_symbol(path, "model family '" + name + "'", "newscls_family"));
  const Family* family = entry ? entry() : nullptr;
  if (family == nullptr || family->name() != name) {
    throw IoError(path, "is not the plugin of model family '" + name + "'");
  }
  spdlog::debug("model family {} loaded from {}", name, path);
  return *family;
}

}  // namespace newscls
