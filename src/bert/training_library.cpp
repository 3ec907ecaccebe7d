// Finds and loads libnewscls_bert_train on first use (see bert_training.h).
#include <dlfcn.h>

#include <filesystem>
#include <mutex>

#include <spdlog/spdlog.h>

#include "bert/bert_training.h"
#include "newscls/core/error.h"

namespace newscls::bert {
namespace {

namespace fs = std::filesystem;

using Entry = const BertTraining* (*)();

// Where the build put it (NEWSCLS_BERT_TRAIN_LIBRARY), else beside the running executable.
std::string training_library_path() {
  const fs::path built = NEWSCLS_BERT_TRAIN_LIBRARY;
  if (fs::exists(built)) return built.string();
  std::error_code error;
  const fs::path tool = fs::read_symlink("/proc/self/exe", error);
  const fs::path beside = tool.parent_path() / built.filename();
  return !error && fs::exists(beside) ? beside.string() : built.string();
}

const BertTraining& load_training_library() {
  // Linked into this program already (the unit tests): no file to find.
  if (auto linked = reinterpret_cast<Entry>(dlsym(RTLD_DEFAULT, kTrainingEntry))) return *linked();
  const std::string path = training_library_path();
  // Never closed: the bundles it trains hold its objects until the process ends.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) throw IoError(path, "cannot load bert's training library: " + std::string(dlerror()));
  auto entry = reinterpret_cast<Entry>(dlsym(handle, kTrainingEntry));
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
