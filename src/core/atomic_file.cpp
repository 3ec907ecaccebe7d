#include "newscls/core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>

#include "newscls/core/error.h"
#include "newscls/core/interrupt.h"

namespace newscls {
namespace {

namespace fs = std::filesystem;

std::string errno_text() { return std::strerror(errno); }

// Whether p's folder, its links resolved (/dev/fd is a link to /proc/self/fd), is in /proc.
bool under_proc(const fs::path& p) {
  std::error_code ec;
  const fs::path folder = fs::weakly_canonical(fs::absolute(p, ec).parent_path(), ec);
  return (folder / "").string().rfind("/proc/", 0) == 0;
}

// Where a chain of symbolic links ends (the last may name nothing yet), and whether it passes
// through /proc, whose fd entries are open streams, not files to replace.
struct LinkTarget {
  std::string path;
  bool through_proc = false;
  bool loop = false;  // still a link after 40 hops
};

LinkTarget follow_links(const std::string& path) {
  LinkTarget t{path, under_proc(path)};
  for (int hops = 0;; ++hops) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(t.path, ec))) break;
    if (hops == 40) {
      t.loop = true;
      break;
    }
    fs::path next = fs::read_symlink(t.path, ec);
    if (ec) break;
    // Against the link's real folder: "s/latest -> ../b" with s itself a link is not "b".
    if (next.is_relative()) next = fs::weakly_canonical(fs::absolute(fs::path(t.path).parent_path(), ec), ec) / next;
    t.path = next.lexically_normal().string();
    t.through_proc = t.through_proc || under_proc(t.path);
  }
  return t;
}

}  // namespace

long pid_in_name(const std::string& name, const std::string& prefix) {
  if (name.size() <= prefix.size() + 1 || name.compare(0, prefix.size(), prefix) != 0 || name[prefix.size()] != '.')
    return 0;
  const std::string digits = name.substr(prefix.size() + 1);
  if (digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return 0;
  return std::stol(digits);
}

std::string sibling_path(const std::string& path, const std::string& tag) {
  constexpr std::size_t kMaxName = 255;  // NAME_MAX of Linux's file systems
  const std::string suffix = "." + tag + "." + std::to_string(::getpid());
  const fs::path p(path);
  const std::string name = p.filename().string();
  if (name.size() + suffix.size() <= kMaxName) return path + suffix;
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016zx", std::hash<std::string>{}(name));
  return (p.parent_path() / ("." + std::string(hash) + suffix)).string();
}

std::string temp_path_for(const std::string& path) { return sibling_path(path, "tmp"); }

std::string link_target(const std::string& path) {
  const LinkTarget t = follow_links(path);
  if (t.loop) throw IoError(path, "is a loop of symbolic links");
  return t.through_proc ? path : t.path;  // /dev/stdout is written in place, not the file it is open on
}

void refuse_dotdot_through_missing(const std::string& what, const std::string& folder) {
  fs::path walked;
  for (const fs::path& part : fs::path(folder)) {
    std::error_code ec;
    if (part == ".." && !walked.empty() && !fs::exists(walked, ec)) {
      throw UsageError(what + ": " + walked.string() +
                       " does not exist, so the '..' after it cannot be followed; spell the folder without it");
    }
    walked /= part;
  }
}

void refuse_folder_spelling(const std::string& option, const std::string& path) {
  const std::string last = fs::path(path).filename().string();
  if ((path.size() > 1 && path.back() == '/') || last == "." || last == "..") {
    throw UsageError(option + " " + path + " ends in '/', so it names a folder; name the file to write");
  }
}

bool written_in_place(const std::string& path) {
  if (path == "-") return true;
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) return false;
  return follow_links(path).through_proc || (exists && !S_ISREG(st.st_mode));
}

std::string without_trailing_slashes(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(path, "cannot open: " + errno_text());
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) throw IoError(path, "read failed");
  return content.str();
}

std::string json_file_text(const nlohmann::json& j) { return j.dump(2) + "\n"; }

void write_json_atomic(const std::string& path, const nlohmann::json& j) { write_file_atomic(path, json_file_text(j)); }

void write_file_atomic(const std::string& path, std::string_view content) {
  AtomicOutputFile out(path);
  out.write(content);
  out.commit();
}

AtomicOutputFile::AtomicOutputFile(const std::string& path) : path_(path), final_path_(path) {
  if (path == "-") {
    file_ = stdout;
    direct_ = true;
    return;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) throw IoError(path, "is a directory");
  if (written_in_place(path)) {
    // A device or FIFO (/dev/null, a pipe) or an open stream (/dev/stderr is a link to
    // /proc/self/fd/2): written in place, appended to as a shell's >> would, since a rename
    // would replace the device, or the log that stderr is redirected to, with a new file.
    file_ = std::fopen(path.c_str(), "ab");
    if (file_ == nullptr) throw IoError(path, "cannot open: " + errno_text());
    direct_ = owns_file_ = true;
    return;
  }
  final_path_ = link_target(path);  // a link keeps pointing at the file it names, which is replaced
  tmp_path_ = temp_path_for(final_path_);
  file_ = std::fopen(tmp_path_.c_str(), "wb");
  if (file_ == nullptr) throw IoError(path, "cannot create: " + errno_text());
  // The replacement keeps the file's permissions (a 600 file became 644 when saved again).
  struct stat old {};
  if (::stat(final_path_.c_str(), &old) == 0 && S_ISREG(old.st_mode)) ::fchmod(::fileno(file_), old.st_mode & 07777);
}

AtomicOutputFile::~AtomicOutputFile() {
  if (committed_) return;
  if (direct_) {
    if (owns_file_ && file_ != nullptr) std::fclose(file_);
    return;
  }
  if (file_ != nullptr) std::fclose(file_);
  if (file_ != nullptr || finished_) std::remove(tmp_path_.c_str());
}

void AtomicOutputFile::write(std::string_view s) {
  if (std::fwrite(s.data(), 1, s.size(), file_) != s.size()) {
    throw IoError(path_, "write failed: " + errno_text());
  }
}

void AtomicOutputFile::finish() {
  if (direct_ || finished_) return;
  const bool flushed = std::fflush(file_) == 0 && ::fsync(::fileno(file_)) == 0;
  const int saved_errno = errno;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!flushed || !closed) {
    std::remove(tmp_path_.c_str());
    errno = flushed ? errno : saved_errno;
    throw IoError(path_, "write failed: " + errno_text());
  }
  finished_ = true;
}

void AtomicOutputFile::commit() {
  if (direct_) {
    bool ok = std::fflush(file_) == 0;
    if (owns_file_) {
      ok = std::fclose(file_) == 0 && ok;
      file_ = nullptr;
    }
    if (!ok) throw IoError(owns_file_ ? path_ : "<stdout>", "write failed: " + errno_text());
    committed_ = true;
    return;
  }
  finish();
  if (std::rename(tmp_path_.c_str(), final_path_.c_str()) != 0) {
    const std::string why = errno_text();
    std::remove(tmp_path_.c_str());
    throw IoError(path_, "cannot rename into place: " + why);
  }
  committed_ = true;
  const fs::path parent = fs::path(final_path_).parent_path();
  sync_path(parent.empty() ? "." : parent.string());  // records the rename itself
}

void AtomicFileSet::add(const std::string& path, std::string_view content) {
  files_.push_back(std::make_unique<AtomicOutputFile>(path));
  files_.back()->write(content);
  files_.back()->finish();
}

void AtomicFileSet::drop(const std::string& path) { dropped_.push_back(path); }

void AtomicFileSet::commit() {
  check_interrupted();  // as BundleWriter::commit: a Ctrl-C before the renames keeps the earlier set
  for (auto& file : files_) file->commit();
  for (const std::string& path : dropped_) {
    std::error_code ec;
    if (fs::is_regular_file(fs::symlink_status(path, ec)) && !fs::remove(path, ec) && ec) {
      throw IoError(path, "cannot remove the earlier run's file: " + ec.message());
    }
  }
}

void make_directories(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw IoError(dir, "cannot create directory: " + ec.message());
}

bool same_file(const std::string& output, const std::string& input) {
  if (output == "-" || input == "-") return false;
  std::error_code ec;
  return fs::is_regular_file(input, ec) && fs::exists(output, ec) && fs::equivalent(output, input, ec);
}

void refuse_output_over_input(const std::string& output, const std::string& input) {
  if (same_file(output, input)) {
    throw UsageError("--output " + output + " is the --input file: the answers would replace the titles; " +
                     "write them to another file");
  }
}

bool folders_overlap(const std::string& a, const std::string& b) {
  std::error_code ec;
  const fs::path x = fs::weakly_canonical(fs::absolute(a), ec);
  const fs::path y = fs::weakly_canonical(fs::absolute(b), ec);
  const auto inside = [](const fs::path& outer, const fs::path& inner) {
    auto o = outer.begin(), i = inner.begin();
    for (; o != outer.end() && !o->empty(); ++o, ++i) {
      if (i == inner.end() || *o != *i) return false;
    }
    return true;
  };
  return inside(x, y) || inside(y, x);
}

void sync_path(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError(path, "cannot open to sync: " + errno_text());
  const bool synced = ::fsync(fd) == 0;
  const int saved_errno = errno;
  ::close(fd);
  // EINVAL: a file system that cannot sync this kind of file (some cannot sync directories).
  if (!synced && saved_errno != EINVAL) {
    errno = saved_errno;
    throw IoError(path, "fsync failed: " + errno_text());
  }
}

void sync_tree(const std::string& dir) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::file_status status = it->symlink_status(ec);
    if (!ec && (fs::is_regular_file(status) || fs::is_directory(status))) sync_path(it->path().string());
  }
  if (ec) throw IoError(dir, "cannot list to sync: " + ec.message());
  sync_path(dir);
}

void replace_directory(const std::string& from, const std::string& to) {
  const std::string old_dir = sibling_path(to, "old");
  std::error_code ec;
  const bool had_old = fs::exists(to, ec);
  if (had_old) {
    fs::rename(to, old_dir, ec);
    if (ec) throw IoError(to, "cannot move the existing directory aside: " + ec.message());
  }
  fs::rename(from, to, ec);
  if (ec) {
    std::string why = ec.message();  // before the move back can overwrite ec
    if (had_old) {
      std::error_code restore;
      fs::rename(old_dir, to, restore);
      if (restore) why += "; the previous one is left at " + old_dir + " (" + restore.message() + ")";
    }
    throw IoError(to, "cannot move the new directory into place: " + why);
  }
  if (had_old) fs::remove_all(old_dir, ec);
}

}  // namespace newscls
