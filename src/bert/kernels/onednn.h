// What bert's direct oneDNN calls share (int8_gemm.cpp, batched_matmul.cpp): the CPU engine,
// and running a primitive on the calling thread with a scratchpad of its own, with oneDNN's
// OpenMP team sized to the intra-op threads (kernels/blas_threads.h; a served model's worker
// threads would otherwise each start one per core).
#pragma once

#include <cstddef>
#include <unordered_map>

#include <dnnl.hpp>

namespace newscls::bert::onednn {

const dnnl::engine& cpu_engine();

// Executes and waits; args gets DNNL_ARG_SCRATCHPAD when scratchpad_bytes > 0.
void run(const dnnl::primitive& primitive, std::unordered_map<int, dnnl::memory> args, std::size_t scratchpad_bytes);

// An attribute set whose scratchpad the caller provides (so primitives can be shared by threads).
dnnl::primitive_attr user_scratchpad();

}  // namespace newscls::bert::onednn
