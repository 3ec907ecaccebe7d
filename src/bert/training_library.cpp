// Finds and loads libnewscls_bert_train on first use (see bert_training.h).
#include <dlfcn.h>

#include <mutex>

#include <spdlog/spdlog.h>

#include "bert/bert_training.h"
#include "newscls/core/error.h"
#include "newscls/core/shared_library.h"

namespace newscls::bert {
namespace {

using Entry = const BertTraining* (*)();

const BertTraining& load_training_library() {
  // Linked into this program already (the unit tests): no file to find.
  if (auto linked = reinterpret_cast<Entry>(dlsym(RTLD_DEFAULT, kTrainingEntry))) return *linked();
  // Where the build put it (NEWSCLS_BERT_TRAIN_LIBRARY), else beside the running executable.
  const std::string path = library_beside_tool(NEWSCLS_BERT_TRAIN_LIBRARY);
  auto entry = reinterpret_cast<Entry>(library_symbol(path, "bert's training library", kTrainingEntry));
  if (entry == nullptr) throw IoError(path, std::string("is not bert's training library (no ") + kTrainingEntry + ")");
  spdlog::debug("bert training library loaded from {}", path);
  return *entry();
}

}  // namespace

const BertTraining& training_library() {
  static std::once_flag once;
  static const BertTraining* library = nullptr;
  std::call_once(once, [] { library = &load_training_library(); });
  return *library;
}

}  // namespace newscls::bert
