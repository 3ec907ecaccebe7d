// The parts of RecordReader (newscls/core/record_reader.h): a byte input that strips a BOM and
// counts lines, and one record source per format.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include "newscls/core/record_reader.h"

namespace newscls {

class InputFile {
 public:
  explicit InputFile(const std::string& path);  // IoError for a folder or a file it cannot open
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  // The next byte, or EOF; a read error is an IoError. A BOM at the start is never returned.
  int get();
  void unget(int c) {
    if (c == '\n') --line_;
    pending_.push_back(static_cast<char>(c));
  }
  // One line without its LF or CRLF; false at the end of the file.
  bool read_line(std::string& line);
  // The line the next byte is on, 1-based.
  std::size_t line() const { return line_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  std::string pending_;  // bytes to return before the file's, last first
  std::size_t line_ = 1;
};

class RecordSource {
 public:
  virtual ~RecordSource() = default;
  // The record's text and label as written, or its problem; false at the end of the file.
  virtual bool next(RawRecord& record) = 0;
};

std::unique_ptr<RecordSource> make_tsv_source(InputFile& in);
std::unique_ptr<RecordSource> make_fasttext_source(InputFile& in);
std::unique_ptr<RecordSource> make_jsonl_source(InputFile& in, const FormatOptions& options);
std::unique_ptr<RecordSource> make_csv_source(InputFile& in, const FormatOptions& options);

}  // namespace newscls
