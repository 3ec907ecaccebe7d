// Writing outputs so that a crash or interrupt never leaves a half-written file.
//
// Content goes to "<path>.tmp.<pid>" and is renamed over <path> only when complete and
// flushed, and the folder is synced after the rename; an AtomicOutputFile destroyed without
// commit() removes its temporary file.
// A directory built under a temporary name is made durable with sync_tree() and put in
// place with replace_directory(); sync_path() on its parent then records the rename.
//
//   write_json_atomic("runs/x/metrics.json", json);   // indented by 2, a final newline
//   AtomicOutputFile out(path); std::fputs("...", out.stream()); out.commit();
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace newscls {

void write_file_atomic(const std::string& path, std::string_view content);
// Every JSON file newscls writes: indented by 2, ending in a newline.
std::string json_file_text(const nlohmann::json& j);
void write_json_atomic(const std::string& path, const nlohmann::json& j);
std::string read_file(const std::string& path);

class AtomicOutputFile {
 public:
  // path "-" writes straight to stdout; a device or FIFO (/dev/null, a pipe) or an open
  // stream (/dev/stdout, /dev/fd/N) is appended to in place: nothing to rename. A symbolic
  // link (even one naming nothing yet) keeps the link and replaces the file it names. A
  // directory is an IoError.
  explicit AtomicOutputFile(const std::string& path);
  ~AtomicOutputFile();
  AtomicOutputFile(const AtomicOutputFile&) = delete;
  AtomicOutputFile& operator=(const AtomicOutputFile&) = delete;

  std::FILE* stream() { return file_; }
  void write(std::string_view s);
  // Flushes and fsyncs the temporary file; throws IoError on failure (a full disk, say).
  // Nothing is in place yet: AtomicFileSet finishes a set of files before renaming any.
  void finish();
  // finish(), then renames over the path; throws IoError on failure.
  void commit();

 private:
  std::string path_, final_path_, tmp_path_;  // final_path_: path_ with a link resolved
  std::FILE* file_ = nullptr;
  bool direct_ = false;     // written in place: stdout, a device, FIFO or open stream
  bool owns_file_ = false;  // direct_ to a file we opened (not stdout)
  bool finished_ = false;
  bool committed_ = false;
};

// Files that belong together (eval's metrics.json and the files beside it): each is written
// and synced under its temporary name as it is added, and none is renamed before commit(), so
// a full disk leaves every earlier file as it was. Renamed in the order added: the file that
// marks a complete set goes last. Destroyed without commit(), it removes its temporary files.
class AtomicFileSet {
 public:
  void add(const std::string& path, std::string_view content);
  // A file of an earlier set that this one has not (a figure with nothing to draw this
  // time): removed by commit(), so no stale file stands beside the new ones.
  void drop(const std::string& path);
  void commit();

 private:
  std::vector<std::unique_ptr<AtomicOutputFile>> files_;
  std::vector<std::string> dropped_;
};

// Where a chain of symbolic links from path ends (the last may name nothing yet), each link
// read against its real folder; path itself when it is no link, or when the chain passes
// through /proc (/dev/stdout: an open stream). IoError for a loop of links.
std::string link_target(const std::string& path);

// A name beside path for this process's work on it: "<path>.<tag>.<pid>", or, when that would
// be too long for the file system (a name of 246..255 bytes), ".<hash>.<tag>.<pid>" beside it.
std::string sibling_path(const std::string& path, const std::string& tag);
// The temporary name a write of path uses: sibling_path(path, "tmp").
std::string temp_path_for(const std::string& path);
// The pid in a name "<prefix>.<pid>" (a StagingFolder's), or 0 when name is not one.
long pid_in_name(const std::string& name, const std::string& prefix);

// UsageError before any work when an output file is spelt as a folder ("out/", "out/."): the
// folder would be made, then refused.
void refuse_folder_spelling(const std::string& option, const std::string& path);

// UsageError (starting with `what`) when folder has a ".." after a folder that does not exist
// ("b/nosuch/../x"): making the folders to reach it would leave b/nosuch/ behind.
void refuse_dotdot_through_missing(const std::string& what, const std::string& folder);

// True for what AtomicOutputFile writes in place instead of replacing: "-" (stdout), a device
// or FIFO, an open stream (/dev/stdout, /dev/fd/N: anything reached through /proc). Such a
// path has no folder of the user's beside it.
bool written_in_place(const std::string& path);

// "runs/x/" as "runs/x": the spelling that names things beside the folder (runs/x.work).
std::string without_trailing_slashes(std::string dir);

// Creates dir and its parents; IoError when it cannot.
void make_directories(const std::string& dir);

// True when a and b name the same folder or one lies inside the other, however spelt
// (a trailing slash, "." or "..", a symbolic link): replacing one would destroy the other.
bool folders_overlap(const std::string& a, const std::string& b);

// True when output names the same regular file as input, however spelt (a symbolic or hard
// link); "-" is neither.
bool same_file(const std::string& output, const std::string& input);

// UsageError when output names the same regular file as input ("-" is neither): writing the
// answers would replace the titles being read.
void refuse_output_over_input(const std::string& output, const std::string& input);

// fsync of one file or directory; IoError naming path on failure.
void sync_path(const std::string& path);
// fsync of every file and directory under dir, then of dir itself, so that a rename of dir
// made after it can never reveal files whose contents are still only in the page cache.
void sync_tree(const std::string& dir);

// Renames directory from over to. An existing to is first moved aside to "<to>.old.<pid>"
// and removed once from is in place; if that rename fails, the old to is moved back and the
// IoError carries the rename's own error (errno), not the outcome of moving it back.
void replace_directory(const std::string& from, const std::string& to);

}  // namespace newscls
