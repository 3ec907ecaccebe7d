// How many threads bert runs on, without LibTorch: OpenBLAS's pool (the runtime's F32 GEMMs,
// and Debian's LibTorch's) and the intra-op threads (OpenMP: oneDNN's teams, kernels/onednn.h;
// the training library gives LibTorch the same number, at::set_num_threads(intra_op_threads())).
// Set here, once, for prediction, training and pretraining alike.
//
//   apply_threads(threads, options.max_threads);   // 0: leave both at every core
//   spdlog::info("OpenBLAS {}", openblas_threads_note(threads));
#pragma once

#include <string>

namespace newscls::bert {

// The intra-op threads are at most max_threads (OpenMP's threads and OpenBLAS's oversubscribe
// the cores), OpenBLAS gets all `threads` unless OPENBLAS_NUM_THREADS says otherwise (0 = leave
// both at their defaults: every core).
void apply_threads(int threads, int max_threads);
// The intra-op threads apply_threads last set; 0 while it has set none.
int intra_op_threads();
// Sizes the calling thread's OpenMP teams (OpenMP's setting is per thread), as
// at::init_num_threads did for LibTorch's setting.
void set_openmp_threads(int threads);
// What OpenBLAS runs on, for the log: OPENBLAS_NUM_THREADS=..., "N thread(s)" or "on every core".
std::string openblas_threads_note(int threads);

}  // namespace newscls::bert
