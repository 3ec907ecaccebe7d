#include "bert/compress/compress.h"

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
  for (const CompressMethod& m : compress_methods()) {
    if (request.method == m.name) return m.run(request);
  }
  throw UsageError("bert has no compression method '" + request.method + "'");
}

}  // namespace newscls::bert
