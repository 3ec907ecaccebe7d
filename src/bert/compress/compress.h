// `newscls compress` for bert bundles. Each method reads the bundle at request.model_dir and
// commits a new bert bundle at request.out_dir that eval, predict, attention, embed and info
// load like any other; it returns the facts Family::compress documents.
//
//   for (const CompressMethod& m : compress_methods()) ...
//   nlohmann::json facts = compress_bundle(request);   // dispatches on request.method
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "newscls/core/family.h"

namespace newscls::bert {

struct CompressMethod {
  const char* name;
  nlohmann::json (*run)(const CompressContext& request);
  // Learns from teachers (--teacher): their weighting as the method's settings ask for it.
  TeacherWeighting (*teacher_weighting)(const std::vector<std::string>& overrides, std::size_t teachers) = nullptr;
};

const std::vector<CompressMethod>& compress_methods();
std::vector<std::string> compress_method_names();
nlohmann::json compress_bundle(const CompressContext& request);
// Null when bert has no method of that name.
const CompressMethod* find_compress_method(const std::string& name);

// int8 Linear layers and tables (quantize.cpp).
nlohmann::json quantize_bundle(const CompressContext& request);
// distill.cpp: a student bert learnt from the teachers' soft labels (and attention).
nlohmann::json distill_bundle(const CompressContext& request);
// The teachers' weighting distill's settings ask for (--set teacher_weights: equal, auto or one
// number per teacher); ConfigError naming teacher_weights when it is none of them.
TeacherWeighting distill_teacher_weighting(const std::vector<std::string>& overrides, std::size_t teachers);
// Its settings with "_doc" strings; an unknown --set key is refused naming it.
nlohmann::json distill_defaults();
// Head pruning (bert/prune.h): importance on dev, heads sliced away, optional recovery.
nlohmann::json prune_bundle(const CompressContext& request);

}  // namespace newscls::bert
