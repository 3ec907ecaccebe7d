// The file `newscls audit` writes and `train --exclude/--relabel` reads: CSV (RFC 4180) with
// the header line,title,given,suggested,score, one row per title flagged, most likely
// mislabelled first.
//
//   line       the title's 1-based line in the training file (a CSV record's first line)
//   title      the title as the file holds it (a tab or line break as a space)
//   given      its class in the file; suggested: the class the audit proposes
//   score      how likely the given label is wrong, 0..1
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace newscls {

struct AuditRow {
  std::size_t line = 0;
  std::string title, given, suggested;
  double score = 0;
  std::size_t file_line = 0;  // where read_audit_file found the row (for messages)
};

// The header and the rows, each field quoted when it holds a comma, quote, line break or
// leading or trailing space.
std::string audit_csv(const std::vector<AuditRow>& rows);

// The rows of an audit file (score not read: train needs the rest); DataError naming
// path:line for a file that is not one (its header, a bad line number, a line listed twice).
std::vector<AuditRow> read_audit_file(const std::string& path);

// A title as an audit file holds it: one line (tabs and line breaks as spaces).
std::string audit_title(const std::string& title);

}  // namespace newscls
