#include "newscls/core/shared_library.h"

#include <dlfcn.h>

#include <filesystem>

#include "newscls/core/error.h"

namespace newscls {

namespace fs = std::filesystem;

std::string library_beside_tool(const std::string& built_at) {
  if (fs::exists(built_at)) return built_at;
  std::error_code error;
  const fs::path tool = fs::read_symlink("/proc/self/exe", error);
  if (error) return built_at;
  const fs::path beside = tool.parent_path() / fs::path(built_at).filename();
  return fs::exists(beside) ? beside.string() : built_at;
}

void* library_symbol(const std::string& path, const std::string& what, const char* symbol) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) throw IoError(path, "cannot load " + what + ": " + std::string(dlerror()));
  return dlsym(handle, symbol);
}

}  // namespace newscls
