#include "workflow/staging_folder.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <vector>

#include "newscls/core/atomic_file.h"

namespace fs = std::filesystem;

namespace newscls {
namespace {

bool process_gone(long pid) { return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }

void remove_abandoned(const std::string& parent, const std::string& prefix) {
  std::error_code ec;
  std::vector<fs::path> gone;
  for (const fs::directory_entry& e : fs::directory_iterator(parent, ec)) {
    const long pid = pid_in_name(e.path().filename().string(), prefix);
    if (pid > 0 && (pid == ::getpid() || process_gone(pid))) gone.push_back(e.path());
  }
  for (const fs::path& p : gone) fs::remove_all(p, ec);
}

}  // namespace

StagingFolder::StagingFolder(const std::string& parent, const std::string& prefix)
    : path_((fs::path(parent.empty() ? "." : parent) / (prefix + "." + std::to_string(::getpid()))).string()) {
  make_directories(parent.empty() ? "." : parent);
  remove_abandoned(parent.empty() ? "." : parent, prefix);
  make_directories(path_);
}

StagingFolder::~StagingFolder() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

}  // namespace newscls
