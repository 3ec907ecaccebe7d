#include "bert/compress.h"

#include "bert/quantize.h"
#include "newscls/bundle.h"
#include "newscls/error.h"

namespace newscls::bert {

// One line per method; its implementation lives in its own file.
const std::vector<CompressMethod>& compress_methods() {
  static const std::vector<CompressMethod> kMethods = {
      {"quantize", quantize_bundle},
      {"distill", distill_bundle},
      {"prune", prune_bundle},
  };
  return kMethods;
}

std::vector<std::string> compress_method_names() {
  std::vector<std::string> names;
  for (const CompressMethod& m : compress_methods()) names.push_back(m.name);
  return names;
}

nlohmann::json compress_bundle(const CompressRequest& request) {
  // Every method starts from float weights ("lists no payload 'weights.bin'" said nothing).
  if (has_int8_weights(Bundle::open(request.model_dir))) {
    throw UsageError(request.model_dir + " holds int8 weights: compress the float bundle it was quantised from");
  }
  for (const CompressMethod& m : compress_methods()) {
    if (request.method == m.name) return m.run(request);
  }
  throw UsageError("bert has no compression method '" + request.method + "'");
}

}  // namespace newscls::bert
