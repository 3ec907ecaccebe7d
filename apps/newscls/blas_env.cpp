#include "blas_env.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace newscls::app {
namespace {

constexpr const char* kDoneVariable = "NEWSCLS_BLAS_ENV_DONE";

bool is_set(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0';
}

bool manifest_is_bert(const std::string& model_dir) {
  std::ifstream in(model_dir + "/manifest.json");
  std::stringstream text;
  text << in.rdbuf();
  return text.str().find("\"family\": \"bert") != std::string::npos;
}

// Only the BERT stage does heavy BLAS work; other commands skip the re-exec, which costs
// a second LibTorch start-up (about half a second).
bool command_uses_blas(char** argv) {
  bool pipeline = false, stages_given = false;
  for (char** arg = argv + 1; *arg != nullptr; ++arg) {
    const std::string a = *arg;
    if (a.find("bert") != std::string::npos || a == "pretrain" || a == "attention") return true;
    if (a == "pipeline") pipeline = true;
    if (a.rfind("--stages", 0) == 0) stages_given = true;
    if (a == "--model-dir" && arg[1] != nullptr && manifest_is_bert(arg[1])) return true;
    if (a.rfind("--model-dir=", 0) == 0 && manifest_is_bert(a.substr(12))) return true;
  }
  return pipeline && !stages_given;
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
  if (!command_uses_blas(argv)) return;
  const char* core = best_openblas_core();
  if (core == nullptr) return;
  setenv("OPENBLAS_CORETYPE", core, 1);
  setenv(kDoneVariable, "1", 1);
  execv("/proc/self/exe", argv);  // returns only on failure: then run with the defaults
}

}  // namespace newscls::app
