#include "workflow/staging_folder.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <vector>

#include "newscls/atomic_file.h"

namespace fs = std::filesystem;

namespace newscls {
namespace {

// The pid in "<prefix>.<pid>", or 0 when name is not such a folder's.
long staging_pid(const std::string& name, const std::string& prefix) {
  if (name.size() <= prefix.size() + 1 || name.compare(0, prefix.size(), prefix) != 0 || name[prefix.size()] != '.') return 0;
  const std::string digits = name.substr(prefix.size() + 1);
  if (digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) return 0;
  return std::stol(digits);
}

bool process_gone(long pid) { return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }

void remove_abandoned(const std::string& parent, const std::string& prefix) {
  std::error_code ec;
  std::vector<fs::path> gone;
  for (const fs::directory_entry& e : fs::directory_iterator(parent, ec)) {
    const long pid = staging_pid(e.path().filename().string(), prefix);
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
