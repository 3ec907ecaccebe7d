#include "bert/kernels/onednn.h"

#include <cstdint>
#include <vector>

#include "bert/kernels/blas_threads.h"

namespace newscls::bert::onednn {

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

void run(const dnnl::primitive& primitive, std::unordered_map<int, dnnl::memory> args, std::size_t scratchpad_bytes) {
  thread_local int threads = 0;
  if (const int wanted = intra_op_threads(); wanted > 0 && threads != wanted) {
    set_openmp_threads(wanted);  // this thread's OpenMP team size := the intra-op setting
    threads = wanted;
  }
  std::vector<std::uint8_t> scratch(scratchpad_bytes);
  if (scratchpad_bytes > 0) {
    args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory({{static_cast<dnnl::memory::dim>(scratchpad_bytes)},
                                                    dnnl::memory::data_type::u8,
                                                    dnnl::memory::format_tag::a},
                                                   cpu_engine(), scratch.data()));
  }
  dnnl::stream stream(cpu_engine());
  primitive.execute(stream, args);
  stream.wait();
}

}  // namespace newscls::bert::onednn
