#include "blas_env.h"

#include <unistd.h>

#include <cstdlib>

namespace newscls::app {
namespace {

constexpr const char* kDoneVariable = "NEWSCLS_BLAS_ENV_DONE";

bool is_set(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0';
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

void ensure_blas_environment(char** argv) {
  if (is_set(kDoneVariable) || is_set("NEWSCLS_NO_BLAS_TUNING") || is_set("OPENBLAS_CORETYPE")) return;
  const char* core = best_openblas_core();
  if (core == nullptr) return;
  setenv("OPENBLAS_CORETYPE", core, 1);
  setenv(kDoneVariable, "1", 1);
  execv("/proc/self/exe", argv);  // returns only on failure: then run with the defaults
}

}  // namespace newscls::app
