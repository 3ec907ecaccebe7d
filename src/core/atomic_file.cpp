#include "newscls/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "newscls/error.h"

namespace newscls {
namespace {

std::string errno_text() { return std::strerror(errno); }

std::string temp_name(const std::string& path) { return path + ".tmp." + std::to_string(::getpid()); }

}  // namespace

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(path, "cannot open: " + errno_text());
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) throw IoError(path, "read failed");
  return content.str();
}

void write_file_atomic(const std::string& path, std::string_view content) {
  AtomicOutputFile out(path);
  out.write(content);
  out.commit();
}

AtomicOutputFile::AtomicOutputFile(const std::string& path) : path_(path) {
  if (path == "-") {
    file_ = stdout;
    is_stdout_ = true;
    return;
  }
  tmp_path_ = temp_name(path);
  file_ = std::fopen(tmp_path_.c_str(), "wb");
  if (file_ == nullptr) throw IoError(path, "cannot create: " + errno_text());
}

AtomicOutputFile::~AtomicOutputFile() {
  if (is_stdout_ || committed_) return;
  if (file_ != nullptr) std::fclose(file_);
  std::remove(tmp_path_.c_str());
}

void AtomicOutputFile::write(std::string_view s) {
  if (std::fwrite(s.data(), 1, s.size(), file_) != s.size()) {
    throw IoError(path_, "write failed: " + errno_text());
  }
}

void AtomicOutputFile::commit() {
  if (is_stdout_) {
    if (std::fflush(stdout) != 0) throw IoError("<stdout>", "write failed: " + errno_text());
    committed_ = true;
    return;
  }
  const bool flushed = std::fflush(file_) == 0 && ::fsync(::fileno(file_)) == 0;
  const int saved_errno = errno;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!flushed || !closed) {
    std::remove(tmp_path_.c_str());
    errno = flushed ? errno : saved_errno;
    throw IoError(path_, "write failed: " + errno_text());
  }
  if (std::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    const std::string why = errno_text();
    std::remove(tmp_path_.c_str());
    throw IoError(path_, "cannot rename into place: " + why);
  }
  committed_ = true;
}

void make_directories(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw IoError(dir, "cannot create directory: " + ec.message());
}

}  // namespace newscls
