#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "core/record_source.h"
#include "newscls/core/error.h"
#include "newscls/core/interrupt.h"
#include "newscls/core/utf8.h"

namespace newscls {
namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";

// newscls's titles are single lines (predictions.tsv, the TSV outputs): a line break or tab
// inside a CSV field or JSON string becomes a space.
void make_one_line(std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') continue;  // CRLF: one space
    out.push_back(c == '\n' || c == '\r' || c == '\t' ? ' ' : c);
  }
  text.swap(out);
}

void trim_spaces(std::string& s) {
  const std::size_t first = s.find_first_not_of(' ');
  if (first == std::string::npos) return s.clear();
  s = s.substr(first, s.find_last_not_of(' ') - first + 1);
}

// Empty when the record can be used; else what is wrong with it.
std::string check_record(RawRecord& r) {
  // UTF-16 (Windows' "Unicode") puts a NUL beside every ASCII byte.
  if (r.text.find('\0') != std::string::npos || r.label.find('\0') != std::string::npos) {
    return "a NUL byte in the record: is the file UTF-16? newscls reads UTF-8";
  }
  if (is_blank_title(r.text)) return "empty text";
  if (!is_valid_utf8(r.text)) return "text is not valid UTF-8";
  trim_spaces(r.label);
  if (r.label.empty()) return "empty label";
  if (!is_valid_utf8(r.label)) return "label is not valid UTF-8";
  if (has_invisible_char(r.label))
    return "label '" + quoted_for_message(r.label, 40) + "' holds a control or format character";
  // The reports' and predictions' word for an answer of no class (an LLM's).
  if (r.label == "unknown") return "label 'unknown' is newscls's word for no class; name the class otherwise";
  return {};
}

std::string lower_extension(const std::string& path) {
  const std::size_t slash = path.find_last_of('/'), dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = path.substr(dot + 1);
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

}  // namespace

namespace {

struct FormatName {
  DataFormat format;
  const char* name;
  std::vector<std::string> extensions;
};

// fastText's file format shares the family's name: test_house_rules lets a line naming a
// DataFormat:: enumerator say it.
const std::vector<FormatName>& format_table() {
  static const std::vector<FormatName> table = {
      {DataFormat::kTsv, "tsv", {"tsv", "txt"}},
      {DataFormat::kCsv, "csv", {"csv"}},
      {DataFormat::kJsonl, "jsonl", {"jsonl", "json", "ndjson"}},
      {DataFormat::kFastText, "fasttext", {"ft", "fasttext"}},
  };
  return table;
}

}  // namespace

const std::vector<std::string>& data_format_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const FormatName& f : format_table()) out.push_back(f.name);
    return out;
  }();
  return names;
}

const char* to_string(DataFormat format) {
  for (const FormatName& f : format_table()) {
    if (f.format == format) return f.name;
  }
  return "tsv";
}

DataFormat format_of(const std::string& path, const std::string& format) {
  for (const FormatName& f : format_table()) {
    if (format.empty() ? std::count(f.extensions.begin(), f.extensions.end(), lower_extension(path)) > 0
                       : format == f.name) {
      return f.format;
    }
  }
  if (!format.empty()) throw UsageError("--format " + format + ": expected tsv, csv, jsonl or fasttext");
  return DataFormat::kTsv;  // as every labelled file was read before there were formats
}

InputFile::InputFile(const std::string& path) : path_(path) {
  // fopen opens a folder and then fails to read it, with no reason to give.
  if (struct stat st{}; ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw IoError(path, "is a folder, not a file");
  file_ = std::fopen(path.c_str(), "rb");
  if (file_ == nullptr) throw IoError(path, std::string("cannot open: ") + std::strerror(errno));
  std::string head;
  for (int c; head.size() < kBom.size() && (c = getc_unlocked(file_)) != EOF;) head.push_back(static_cast<char>(c));
  if (head != kBom) pending_.assign(head.rbegin(), head.rend());
}

InputFile::~InputFile() { std::fclose(file_); }

int InputFile::get() {
  int c;
  if (!pending_.empty()) {
    c = static_cast<unsigned char>(pending_.back());
    pending_.pop_back();
  } else if ((c = getc_unlocked(file_)) == EOF && std::ferror(file_)) {
    check_interrupted();
    throw IoError(path_, std::string("read failed: ") + std::strerror(errno));
  }
  if (c == '\n') ++line_;
  return c;
}

bool InputFile::read_line(std::string& line) {
  line.clear();
  int c = get();
  if (c == EOF) return false;
  for (; c != EOF && c != '\n'; c = get()) line.push_back(static_cast<char>(c));
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return true;
}

RecordReader::RecordReader(const std::string& path, const FormatOptions& options)
    : format_(format_of(path, options.format)), input_(std::make_unique<InputFile>(path)) {
  switch (format_) {
    case DataFormat::kTsv: source_ = make_tsv_source(*input_); break;
    case DataFormat::kCsv: source_ = make_csv_source(*input_, options); break;
    case DataFormat::kJsonl: source_ = make_jsonl_source(*input_, options); break;
    case DataFormat::kFastText: source_ = make_fasttext_source(*input_); break;
  }
}

RecordReader::~RecordReader() = default;

bool RecordReader::next(RawRecord& record) {
  record.problem.clear();
  if (!source_->next(record)) return false;
  // A TSV or fastText text is a line already (a TSV title may hold a tab, as it always could).
  if (format_ == DataFormat::kCsv || format_ == DataFormat::kJsonl) make_one_line(record.text);
  if (record.problem.empty()) record.problem = check_record(record);
  return true;
}

std::string csv_field(const std::string& s) {
  const bool edge_space = !s.empty() && (s.front() == ' ' || s.back() == ' ');  // kept only inside quotes
  if (s.find_first_of(",\"\r\n") == std::string::npos && !edge_space) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace newscls
