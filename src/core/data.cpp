#include "newscls/core/data.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>

#include <spdlog/spdlog.h>

#include "newscls/core/error.h"
#include "newscls/core/interrupt.h"
#include "newscls/core/sha256.h"
#include "newscls/core/utf8.h"

namespace newscls {
namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";

// Removes the CR of a CRLF line end and, on the first line, a UTF-8 BOM.
void clean_line(std::string& line, std::size_t line_number) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line_number == 1 && line.compare(0, kBom.size(), kBom) == 0) line.erase(0, kBom.size());
}

// Empty string when the line is good; otherwise what is wrong with it.
std::string parse_labeled_line(const std::string& line, int num_labels, std::string& title, int& label) {
  // UTF-16 (Windows' "Unicode") puts a NUL beside every ASCII byte.
  if (line.find('\0') != std::string::npos) return "a NUL byte in the line: is the file UTF-16? newscls reads UTF-8";
  const std::size_t tab = line.rfind('\t');
  if (tab == std::string::npos) return "no tab between title and label";
  std::string_view label_text(line.data() + tab + 1, line.size() - tab - 1);
  if (label_text.empty() || label_text.find_first_not_of("0123456789") != std::string_view::npos) {
    return "label '" + quoted_for_message(label_text, 40) + "' is not a non-negative integer";
  }
  // Digits only; leading zeros do not count (0000000001 is 1), more than 9 others overflow atoi.
  const std::size_t first_digit = std::min(label_text.find_first_not_of('0'), label_text.size() - 1);
  if (label_text.size() - first_digit > 9) {
    return "label " + quoted_for_message(label_text, 40) + " out of range 0.." + std::to_string(num_labels - 1);
  }
  label = std::atoi(std::string(label_text.substr(first_digit)).c_str());
  if (label >= num_labels) {
    return "label " + std::to_string(label) + " out of range 0.." + std::to_string(num_labels - 1);
  }
  title.assign(line, 0, tab);
  if (is_blank_title(title)) return "empty title";
  if (!is_valid_utf8(title)) return "title is not valid UTF-8";
  return {};
}

bool has_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::ifstream open_for_reading(const std::string& path) {
  // An ifstream opens a folder and then fails to read it, with no reason to give.
  if (struct stat st{}; ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw IoError(path, "is a folder, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(path, std::string("cannot open: ") + std::strerror(errno));
  return in;
}

}  // namespace

bool is_blank_title(std::string_view title) { return !has_visible_char(title); }

int LabelSet::id_of(const std::string& name) const {
  for (int i = 0; i < size(); ++i) {
    if (names[i] == name) return i;
  }
  return -1;
}

LabelSet read_class_file(const std::string& path) {
  std::ifstream in = open_for_reading(path);
  LabelSet labels;
  std::string line;
  std::size_t first_blank = 0;  // blank lines may end the file, not split it: ids are line numbers
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    clean_line(line, number);
    if (is_blank_title(line)) {
      if (first_blank == 0) first_blank = number;
      continue;
    }
    if (first_blank != 0) {
      throw DataError(path, first_blank, "blank line among the class names (a class's id is its line number, from 0)");
    }
    if (!is_valid_utf8(line)) throw DataError(path, number, "class name is not valid UTF-8");
    if (has_invisible_char(line)) {
      throw DataError(path, number, "class name holds a tab or another control or format character");
    }
    if (line.front() == ' ' || line.back() == ' ') {
      throw DataError(path, number, "class name '" + line + "' begins or ends with a space");
    }
    // The reports' and predictions' word for an answer of no class (an LLM's): the two would read as one.
    if (line == "unknown")
      throw DataError(path, number, "'unknown' is newscls's word for no class; name the class otherwise");
    if (labels.id_of(line) >= 0) throw DataError(path, number, "duplicate class name '" + line + "'");
    labels.names.push_back(line);
  }
  if (labels.size() < 2) throw DataError(path, 0, "a class list needs at least 2 names");
  return labels;
}

Dataset read_labeled_file(const std::string& path, int num_labels, const ReadOptions& options) {
  std::ifstream in = open_for_reading(path);
  Dataset data;
  data.path = path;
  std::string line, title;
  int label = 0;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    clean_line(line, number);
    if (is_blank_title(line)) continue;  // a blank line, often the file's last: nothing to learn or score
    const std::string problem = parse_labeled_line(line, num_labels, title, label);
    if (problem.empty()) {
      data.titles.push_back(title);
      data.labels.push_back(label);
      data.line_numbers.push_back(number);
      continue;
    }
    if (!options.skip_bad_lines) throw DataError(path, number, problem);
    spdlog::warn("{}:{}: skipped: {}", path, number, problem);
    ++data.skipped_lines;
  }
  if (in.bad()) throw IoError(path, "read failed");
  if (data.titles.empty()) throw DataError(path, 0, "no usable lines");
  if (data.skipped_lines > 0) spdlog::warn("{}: skipped {} bad lines", path, data.skipped_lines);
  return data;
}

std::string data_fingerprint(const DataLayout& layout) {
  std::string hashes;
  for (const std::string& path : {layout.classes(), layout.train(), layout.dev(), layout.test()}) {
    hashes += has_file(path) ? sha256_file_hex(path) : sha256_hex("");
  }
  return sha256_hex(hashes);
}

namespace {

// Said once a process: a pipeline resolves the data for every stage.
void warn_demo_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    spdlog::warn(
        "no data named and no {}: using the demo set {} (3,000 training titles drawn from THUCNews, "
        "for trying the tool; its figures are not THUCNews's). For the full data see data/README.md",
        kFullDataDir, kDemoDataDir);
  });
}

}  // namespace

DataLayout resolve_data_dir(const std::string& flag) {
  // A folder the user named (--data, else $NEWSCLS_DATA) is the only one looked in: a typo
  // must not fall back to other data.
  std::string named = flag, source = "--data";
  if (named.empty()) {
    const char* env = std::getenv("NEWSCLS_DATA");
    if (env != nullptr && *env != '\0') named = env, source = "$NEWSCLS_DATA";
  }
  if (!named.empty()) {
    DataLayout layout{named};
    if (has_file(layout.classes())) return layout;
    if (has_file(named)) {
      throw IoError(named,
                    "is a file; " + source + " names a folder holding class.txt, train.txt, dev.txt and test.txt");
    }
    std::error_code ec;
    if (!std::filesystem::exists(named, ec) && !ec)
      throw IoError(named, "no such data folder (named by " + source + ")");
    if (std::filesystem::is_directory(layout.classes(), ec)) throw IoError(layout.classes(), "is a folder, not a file");
    throw IoError(named, "no class.txt in this data folder (named by " + source + ")");
  }
  if (has_file(DataLayout{kFullDataDir}.classes())) return DataLayout{kFullDataDir};
  if (has_file(DataLayout{kDemoDataDir}.classes())) {
    warn_demo_once();
    return DataLayout{kDemoDataDir};
  }
  throw IoError("data directory",
                std::string("no class.txt found (looked in: ") + kFullDataDir + ", " + kDemoDataDir +
                    "); pass --data DIR or set NEWSCLS_DATA (data/README.md says where to get the data)");
}

std::vector<std::string> split_fields(const std::string& line, char separator) {
  std::vector<std::string> fields;
  std::size_t start = 0;
  for (std::size_t end; (end = line.find(separator, start)) != std::string::npos; start = end + 1) {
    fields.push_back(line.substr(start, end - start));
  }
  fields.push_back(line.substr(start));
  return fields;
}

TitleReader::TitleReader(const std::string& path) : path_(path) {
  if (path == "-") {
    file_ = stdin;
    path_ = "<stdin>";
    return;
  }
  file_ = std::fopen(path.c_str(), "rb");
  if (file_ == nullptr) throw IoError(path, std::string("cannot open: ") + std::strerror(errno));
  owns_ = true;
}

TitleReader::~TitleReader() {
  if (owns_) std::fclose(file_);
}

bool TitleReader::next_line(std::string& line) {
  buffer_.clear();
  int c;
  bool any = false;
  while ((c = getc_unlocked(file_)) != EOF) {
    any = true;
    if (c == '\n') break;
    buffer_.push_back(static_cast<char>(c));
  }
  // A failed read (EINTR when a signal arrives while stdin blocks) must not pass for the
  // end of a line: the line read so far is incomplete.
  if (c == EOF && std::ferror(file_)) {
    check_interrupted();
    throw IoError(path_, std::string("read failed: ") + std::strerror(errno));
  }
  if (!any) return false;
  ++line_;
  clean_line(buffer_, line_);
  line.swap(buffer_);
  return true;
}

bool TitleReader::next(std::string& title) {
  if (!next_line(title)) return false;
  const std::size_t tab = title.rfind('\t');
  if (tab != std::string::npos && title.find_first_not_of("0123456789", tab + 1) == std::string::npos) {
    title.resize(tab);  // "title<TAB>label": the label is ignored
  }
  if (!is_valid_utf8(title)) throw DataError(path_, line_, "title is not valid UTF-8");
  return true;
}

}  // namespace newscls
