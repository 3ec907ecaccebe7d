// How many threads LibTorch and OpenBLAS run on. Debian's LibTorch runs its F32 GEMMs on
// OpenBLAS, whose thread pool at::set_num_threads does not reach; both are set here, once,
// for prediction, training and pretraining alike.
//
//   apply_threads(threads, options.max_threads);   // 0: leave both at every core
//   spdlog::info("OpenBLAS {}", openblas_threads_note(threads));
#pragma once

#include <string>

namespace newscls::bert {

// LibTorch gets at most max_threads (its OpenMP threads and OpenBLAS's oversubscribe the
// cores), OpenBLAS all `threads` unless OPENBLAS_NUM_THREADS says otherwise (0 = leave both
// at their defaults: every core).
void apply_threads(int threads, int max_threads);
// What OpenBLAS runs on, for the log: OPENBLAS_NUM_THREADS=..., "N thread(s)" or "on every core".
std::string openblas_threads_note(int threads);

}  // namespace newscls::bert
