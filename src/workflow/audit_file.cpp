#include "workflow/audit_file.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>

#include "newscls/core/data.h"
#include "newscls/core/error.h"
#include "newscls/core/record_reader.h"
#include "newscls/core/utf8.h"

namespace newscls {
namespace {

constexpr const char* kHeader = "line,title,given,suggested,score";

// The header's column names (unquoted), from the first non-blank line.
std::vector<std::string> header_names(const std::string& path) {
  TitleReader in(path);
  std::string line;
  while (in.next_line(line) && line.empty()) {
  }
  std::vector<std::string> names;
  std::size_t start = 0;
  while (start <= line.size()) {
    const std::size_t comma = std::min(line.find(',', start), line.size());
    std::string name = line.substr(start, comma - start);
    if (name.size() >= 2 && name.front() == '"' && name.back() == '"') name = name.substr(1, name.size() - 2);
    names.push_back(name);
    start = comma + 1;
  }
  return names;
}

void check_header(const std::string& path) {
  const std::vector<std::string> names = header_names(path);
  for (const char* column : {"line", "title", "given", "suggested"}) {
    if (std::find(names.begin(), names.end(), column) == names.end()) {
      throw DataError(path, 1,
                      std::string("not an audit file: no column '") + column +
                          "' in its header (newscls audit writes " + kHeader + ")");
    }
  }
}

// The file's records with `text` and `label` read from the two columns named.
std::vector<RawRecord> column_pair(const std::string& path, const std::string& text, const std::string& label) {
  FormatOptions options;
  options.format = "csv";
  options.text_column = text;
  options.label_column = label;
  RecordReader reader(path, options);
  std::vector<RawRecord> records;
  for (RawRecord r; reader.next(r);) {
    if (!r.problem.empty()) throw DataError(path, r.line, r.problem);
    records.push_back(r);
  }
  return records;
}

std::size_t line_number(const std::string& path, const RawRecord& r) {
  std::size_t line = 0;
  const std::string& s = r.text;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), line);
  if (ec != std::errc() || end != s.data() + s.size() || line == 0) {
    throw DataError(path, r.line,
                    "line '" + quoted_for_message(s, 40) + "' is not a line number (a whole number from 1)");
  }
  return line;
}

}  // namespace

std::string audit_title(const std::string& title) {
  std::string out = title;
  for (char& c : out) {
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  }
  return out;
}

std::string audit_csv(const std::vector<AuditRow>& rows) {
  std::string out = std::string(kHeader) + "\n";
  char score[32];
  for (const AuditRow& r : rows) {
    std::snprintf(score, sizeof score, "%.6f", r.score);
    out += std::to_string(r.line) + "," + csv_field(audit_title(r.title)) + "," + csv_field(r.given) + "," +
           csv_field(r.suggested) + "," + score + "\n";
  }
  return out;
}

std::vector<AuditRow> read_audit_file(const std::string& path) {
  check_header(path);
  // RecordReader reads two columns a pass (its CSV parser, quotes and all): two passes.
  const std::vector<RawRecord> titles = column_pair(path, "title", "suggested");
  const std::vector<RawRecord> lines = column_pair(path, "line", "given");
  std::vector<AuditRow> rows;
  std::map<std::size_t, std::size_t> seen;  // line -> the row that listed it
  for (std::size_t k = 0; k < titles.size() && k < lines.size(); ++k) {
    AuditRow row;
    row.file_line = titles[k].line;
    row.line = line_number(path, lines[k]);
    if (const auto [it, fresh] = seen.emplace(row.line, row.file_line); !fresh) {
      throw DataError(
          path, row.file_line,
          "line " + std::to_string(row.line) + " is listed twice (also on line " + std::to_string(it->second) + ")");
    }
    row.title = titles[k].text;
    row.given = lines[k].label;
    row.suggested = titles[k].label;
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace newscls
