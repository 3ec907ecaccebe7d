// Commands about a model's encoder rather than its labels: importing a foreign checkpoint
// (`newscls import-hf`) and writing title embeddings (`newscls embed`). Both go through the
// generic hooks (Family::import_checkpoint, Classifier::embed), so no family is named here.
//
//   import_checkpoint({"huggingface-bert", "models/bert-base-chinese", "runs/bert-base"});
//   run_embed({"runs/bert-base", "titles.txt", "-", 0});
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "newscls/core/family.h"

namespace newscls {

// The family that imports request.format writes the bundle; UsageError when none does.
nlohmann::json import_checkpoint(const ImportContext& request);

struct EmbedRequest {
  std::string model_dir;
  std::string input = "-";   // titles, one per line (title<TAB>label accepted)
  std::string output = "-";  // JSON lines {"index", "title", "cls", "pooler"?}, written atomically
  int threads = 1;           // resolved (>= 1): the app turns --threads 0 into the core count
};

// Returns the number of titles embedded.
std::size_t run_embed(const EmbedRequest& request);

}  // namespace newscls
