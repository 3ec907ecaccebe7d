// Chooses OpenBLAS's kernel before OpenBLAS loads: its auto-detection picks a slow generic
// kernel on recent CPUs, and it reads OPENBLAS_CORETYPE only at load time, before main.
// So when the user has not set it, newscls sets it from the CPU's real features and
// re-executes itself once. NEWSCLS_NO_BLAS_TUNING=1 turns this off.
#pragma once

namespace newscls::app {

void ensure_blas_environment(char** argv);
// The kernel this CPU supports best, or nullptr to leave OpenBLAS's own choice.
const char* best_openblas_core();

}  // namespace newscls::app
