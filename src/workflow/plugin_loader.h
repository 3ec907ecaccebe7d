// Loads a model family that lives in a plugin (a family that needs LibTorch), once.
//
// Before the first plugin is loaded, OpenBLAS (which LibTorch uses through the system BLAS)
// is pointed at the kernel the CPU really supports: its own detection picks a slow generic
// kernel on recent CPUs, and it reads OPENBLAS_CORETYPE only when it loads.
// OPENBLAS_CORETYPE or NEWSCLS_NO_BLAS_TUNING in the environment leave the choice alone.
#pragma once

#include <string>

#include "newscls/core/family.h"

namespace newscls {

// Throws IoError naming the plugin when it cannot be loaded or has no entry point.
const Family& load_family_plugin(const std::string& name, const std::string& path);

// "SkylakeX" with AVX-512, "Haswell" with AVX2 and FMA, else nullptr.
const char* best_openblas_core();

}  // namespace newscls
