// Named tensors as a newscls payload instead of torch::save pickles, so that a truncated or
// corrupt file is a clean ModelFormatError and the format is ours to document.
//
// Layout ("NCBW", version 1), all little-endian: u64 tensor count, then per tensor:
// name (u64 length + bytes), u32 ndim, ndim x u64 dims, f32 array (u64 count + values).
// Loading requires exactly the expected names, in order, with the expected shapes.
//
//   save_tensors(path, named_state(*model));
//   load_tensors(path, named_state(*model));   // copies into the module's tensors
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

namespace newscls::bert {

using NamedTensors = std::vector<std::pair<std::string, torch::Tensor>>;

// Parameters then buffers, in registration order.
NamedTensors named_state(const torch::nn::Module& module);
NamedTensors clone_state(const NamedTensors& state);
// Every parameter's element count (compress's before/after, train's facts).
std::int64_t parameter_count(const torch::nn::Module& module);
void copy_state(const NamedTensors& from, const NamedTensors& into);

void save_tensors(const std::string& path, const NamedTensors& tensors);
void load_tensors(const std::string& path, const NamedTensors& into);

}  // namespace newscls::bert
