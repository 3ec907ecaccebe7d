// CSV with a header row (RFC 4180), read a character at a time: a quoted field may hold
// commas, doubled quotes and line breaks; CRLF or LF ends a row.
#include <string>
#include <vector>

#include "core/record_source.h"
#include "newscls/core/error.h"
#include "newscls/core/utf8.h"

namespace newscls {
namespace {

struct Row {
  std::vector<std::string> fields;
  std::size_t line = 0;
  std::string problem;
  bool blank() const { return fields.size() == 1 && is_blank_title(fields[0]); }
};

class CsvSource : public RecordSource {
 public:
  CsvSource(InputFile& in, const FormatOptions& options) : in_(in) { read_header(options); }

  bool next(RawRecord& r) override {
    do {
      if (!read_row()) return false;
    } while (row_.blank() && row_.problem.empty());
    r.line = row_.line;
    r.problem = row_.problem;
    if (r.problem.empty() && row_.fields.size() != columns_) {
      const std::size_t n = row_.fields.size();
      r.problem =
          std::to_string(n) + (n == 1 ? " field" : " fields") + " where the header has " + std::to_string(columns_);
    }
    if (!r.problem.empty()) return true;
    r.text = std::move(row_.fields[text_]);
    r.label = std::move(row_.fields[label_]);
    return true;
  }

 private:
  void read_header(const FormatOptions& options) {
    do {
      if (!read_row()) throw DataError(in_.path(), 0, "no header row (a CSV file names its columns in its first row)");
    } while (row_.blank());
    if (!row_.problem.empty()) throw DataError(in_.path(), row_.line, "header row: " + row_.problem);
    columns_ = row_.fields.size();
    text_ = column(options.text_column, "--text-column");
    label_ = column(options.label_column, "--label-column");
  }

  std::size_t column(const std::string& name, const char* flag) const {
    std::size_t found = columns_;
    std::string names;
    for (std::size_t i = 0; i < columns_; ++i) {
      names += (i == 0 ? "" : ", ") + quoted_for_message(row_.fields[i], 40);
      if (row_.fields[i] != name) continue;
      if (found != columns_) throw DataError(in_.path(), row_.line, "two columns named '" + name + "'");
      found = i;
    }
    if (found == columns_) {
      const bool other_separator = columns_ == 1 && row_.fields[0].find_first_of(";\t") != std::string::npos;
      throw DataError(
          in_.path(), row_.line,
          "no column '" + name + "' in the header (its columns: " + names + "); name it with " + flag +
              (other_separator ? " (newscls reads comma-separated values; this header holds ';' or a tab)" : ""));
    }
    return found;
  }

  // False at the end of the file. An unterminated quote throws: where the row ends is unknown.
  bool read_row() {
    row_.fields.clear();
    row_.problem.clear();
    row_.line = in_.line();
    int c = in_.get();
    if (c == EOF) return false;
    std::string field;
    while (true) {
      if (c == '"' && field.empty()) c = read_quoted(field);
      if (c == EOF || c == '\n' || c == ',') {
        row_.fields.push_back(std::move(field));
        field.clear();
        if (c != ',') return true;
      } else if (c == '\r' && peek() == '\n') {
        // CRLF: the LF ends the row next time round
      } else {
        field.push_back(static_cast<char>(c));
      }
      c = in_.get();
    }
  }

  // Reads a quoted field's content into field; returns the character after its closing quote.
  int read_quoted(std::string& field) {
    const std::size_t opened = in_.line();
    while (true) {
      int c = in_.get();
      if (c == EOF)
        throw DataError(in_.path(), opened, "unterminated quoted field: the \" opened on this line is never closed");
      if (c == '"') {
        c = in_.get();
        if (c != '"') {
          if (c != ',' && c != '\n' && c != '\r' && c != EOF && row_.problem.empty()) {
            row_.problem = "text after the closing quote of a field (a quote inside a quoted field is written \"\")";
          }
          return c;
        }
      }
      field.push_back(static_cast<char>(c));
    }
  }

  int peek() {
    const int c = in_.get();
    if (c != EOF) in_.unget(c);
    return c;
  }

  InputFile& in_;
  Row row_;
  std::size_t columns_ = 0, text_ = 0, label_ = 0;
};

}  // namespace

std::unique_ptr<RecordSource> make_csv_source(InputFile& in, const FormatOptions& options) {
  return std::make_unique<CsvSource>(in, options);
}

}  // namespace newscls
