// Reading labelled title files ("title<TAB>label_id" per line) and class lists.
//
// The reader accepts LF or CRLF line ends, a UTF-8 BOM and a missing final newline.
// A bad line (no tab, non-numeric or out-of-range label, empty title, invalid UTF-8)
// throws DataError naming path:line, unless ReadOptions::skip_bad_lines, which skips
// and counts it. Titles are returned as written (normalisation is the tokenizers' job).
//
//   DataLayout data = resolve_data_dir("");            // default search
//   LabelSet labels = read_class_file(data.classes());
//   Dataset train = read_labeled_file(data.train(), labels.size(), {});
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace newscls {

struct LabelSet {
  std::vector<std::string> names;
  int size() const { return static_cast<int>(names.size()); }
  // -1 when no label has that name.
  int id_of(const std::string& name) const;
};

struct ReadOptions {
  bool skip_bad_lines = false;
};

struct Dataset {
  std::string path;
  std::vector<std::string> titles;
  std::vector<int> labels;
  // Each title's line in path (1-based), where read_labeled_file read it: blank and skipped
  // lines make it differ from the title's index. Empty for a dataset built otherwise.
  std::vector<std::size_t> line_numbers;
  std::size_t skipped_lines = 0;
  std::size_t size() const { return titles.size(); }
};

LabelSet read_class_file(const std::string& path);
Dataset read_labeled_file(const std::string& path, int num_labels, const ReadOptions& options);

// Where a data directory's files are: train.txt, dev.txt, test.txt, class.txt.
struct DataLayout {
  std::string dir;
  std::string train() const { return dir + "/train.txt"; }
  std::string dev() const { return dir + "/dev.txt"; }
  std::string test() const { return dir + "/test.txt"; }
  std::string classes() const { return dir + "/class.txt"; }
  std::string split(const std::string& name) const { return dir + "/" + name + ".txt"; }
};

// True for a title with nothing visible (empty, or only white space and control or format
// characters): a labelled file refuses it, `predict` and the server answer it without asking
// a model.
bool is_blank_title(std::string_view title);

// sha256 over the sha256 of class.txt, train.txt, dev.txt and test.txt (a missing one counts
// as empty): a bundle records the data it was trained on, so a resumed run can tell.
std::string data_fingerprint(const DataLayout& layout);

// Where the data is looked for when --data and $NEWSCLS_DATA name none (relative to the
// working directory): the full data a user put there, then the committed demo set.
inline constexpr const char* kFullDataDir = "data/thucnews";
inline constexpr const char* kDemoDataDir = "data/demo";

// flag, else $NEWSCLS_DATA, else kFullDataDir, else kDemoDataDir (said once on stderr).
// Throws IoError naming every place it looked when none holds class.txt.
DataLayout resolve_data_dir(const std::string& flag);

// Streams titles for `predict`: one per line, "title<TAB>label" accepted (label ignored),
// CRLF and a BOM accepted, invalid UTF-8 is a DataError. Memory does not grow with input.
// The fields of a line between separators: "a,,b" gives a, "", b; an empty line one empty field.
std::vector<std::string> split_fields(const std::string& line, char separator);

class TitleReader {
 public:
  // path "-" reads stdin.
  explicit TitleReader(const std::string& path);
  ~TitleReader();
  TitleReader(const TitleReader&) = delete;
  TitleReader& operator=(const TitleReader&) = delete;

  // False at end of input. An empty line yields an empty title.
  bool next(std::string& title);
  // The line as read (CR and BOM removed, a trailing label kept), not checked for UTF-8.
  bool next_line(std::string& line);
  std::size_t line_number() const { return line_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  bool owns_ = false;
  std::size_t line_ = 0;
  std::string buffer_;
};

}  // namespace newscls
