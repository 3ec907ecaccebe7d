#include "bert/compress/compress.h"

#include "newscls/core/error.h"

namespace newscls::bert {

// One line per method; its implementation lives in its own file.
const std::vector<CompressMethod>& compress_methods() {
  static const std::vector<CompressMethod> kMethods = {
      {"quantize", quantize_bundle},
      {"distill", distill_bundle, distill_teacher_weighting},
      {"prune", prune_bundle},
  };
  return kMethods;
}

std::vector<std::string> compress_method_names() {
  std::vector<std::string> names;
  for (const CompressMethod& m : compress_methods()) names.push_back(m.name);
  return names;
}

const CompressMethod* find_compress_method(const std::string& name) {
  for (const CompressMethod& m : compress_methods()) {
    if (name == m.name) return &m;
  }
  return nullptr;
}

nlohmann::json compress_bundle(const CompressContext& request) {
  if (const CompressMethod* m = find_compress_method(request.method)) return m->run(request);
  throw UsageError("bert has no compression method '" + request.method + "'");
}

}  // namespace newscls::bert
