#include "bert/kernels/blas_threads.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>

// Without this, `--threads 1` still ran OpenBLAS's GEMMs on every core. Weak: another BLAS has
// no such function, and then the library's own default stands.
extern "C" void openblas_set_num_threads(int threads) __attribute__((weak));
// OpenMP's, from libgomp, which oneDNN (libdnnl) links; weak as above: LibTorch no longer
// brings it to the runtime, and without an OpenMP runtime there are no teams to size.
extern "C" void omp_set_num_threads(int threads) __attribute__((weak));

namespace newscls::bert {
namespace {

std::atomic<int> intra_op{0};

// The user's OPENBLAS_NUM_THREADS, or nullptr when unset or empty (OpenBLAS ignores it then too).
const char* openblas_threads_env() {
  const char* v = std::getenv("OPENBLAS_NUM_THREADS");
  return v != nullptr && *v != '\0' ? v : nullptr;
}

}  // namespace

std::string openblas_threads_note(int threads) {
  if (const char* env = openblas_threads_env()) return std::string("OPENBLAS_NUM_THREADS=") + env;
  return threads > 0 ? std::to_string(threads) + " thread(s)" : "on every core";
}

int intra_op_threads() { return intra_op.load(); }

void set_openmp_threads(int threads) {
  if (omp_set_num_threads != nullptr && threads > 0) omp_set_num_threads(threads);
}

void apply_threads(int threads, int max_threads) {
  if (threads <= 0) return;
  intra_op.store(std::min(threads, max_threads));
  set_openmp_threads(intra_op.load());  // this thread's OpenMP teams, as at::set_num_threads set them
  if (openblas_set_num_threads != nullptr && openblas_threads_env() == nullptr) openblas_set_num_threads(threads);
}

}  // namespace newscls::bert
