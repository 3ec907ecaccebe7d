#include "workflow/audit_edits.h"

#include <unordered_map>
#include <vector>

#include <spdlog/spdlog.h>

#include "newscls/core/error.h"
#include "newscls/core/record_reader.h"
#include "newscls/core/sha256.h"
#include "newscls/core/utf8.h"
#include "workflow/audit_file.h"

namespace newscls {
namespace {

using LineIndex = std::unordered_map<std::size_t, std::size_t>;  // line -> position

LineIndex index_lines(const Dataset* data) {
  LineIndex index;
  if (data) {
    for (std::size_t k = 0; k < data->line_numbers.size(); ++k) index.emplace(data->line_numbers[k], k);
  }
  return index;
}

// The row's title and given label, checked against the file's line.
void check_row(const std::string& audit, const AuditRow& row, const Dataset& data, std::size_t k,
               const LabelSet& labels) {
  const std::string where = data.path + ":" + std::to_string(row.line);
  if (audit_title(data.titles[k]) != row.title) {
    throw DataError(audit, row.file_line,
                    "title '" + quoted_for_message(row.title, 60) + "' is not the title of " + where + " ('" +
                        quoted_for_message(data.titles[k], 60) +
                        "'): the audit was made of another file or version of it");
  }
  if (label_id_of(labels, row.given) != data.labels[k]) {
    throw DataError(audit, row.file_line,
                    "given label '" + quoted_for_message(row.given, 40) + "', but " + where + " is labelled '" +
                        labels.names[static_cast<std::size_t>(data.labels[k])] +
                        "': the audit was made of other labels");
  }
}

int suggested_class(const std::string& audit, const AuditRow& row, const LabelSet& labels) {
  const int id = label_id_of(labels, row.suggested);
  if (id < 0) {
    throw DataError(audit, row.file_line,
                    "suggested label '" + quoted_for_message(row.suggested, 40) + "' is none of the " +
                        std::to_string(labels.size()) + " classes");
  }
  return id;
}

Dataset without(const Dataset& data, const std::vector<bool>& dropped) {
  Dataset kept;
  kept.path = data.path;
  kept.skipped_lines = data.skipped_lines;
  for (std::size_t k = 0; k < data.size(); ++k) {
    if (dropped[k]) continue;
    kept.titles.push_back(data.titles[k]);
    kept.labels.push_back(data.labels[k]);
    kept.line_numbers.push_back(data.line_numbers[k]);
  }
  return kept;
}

const char* use_name(AuditUse use) { return use == AuditUse::kExclude ? "exclude" : "relabel"; }

}  // namespace

nlohmann::json apply_audit(const AuditEdits& edits, const LabelSet& labels, Dataset& train, const Dataset* drawn_dev) {
  const std::vector<AuditRow> rows = read_audit_file(edits.path);
  const LineIndex in_train = index_lines(&train), in_dev = index_lines(drawn_dev);
  std::vector<bool> dropped(train.size(), false);
  std::size_t edited = 0, left_in_dev = 0;
  for (const AuditRow& row : rows) {
    const int suggested = edits.use == AuditUse::kRelabel ? suggested_class(edits.path, row, labels) : -1;
    if (const auto t = in_train.find(row.line); t != in_train.end()) {
      check_row(edits.path, row, train, t->second, labels);
      if (edits.use == AuditUse::kExclude)
        dropped[t->second] = true;
      else
        train.labels[t->second] = suggested;
      ++edited;
    } else if (const auto d = in_dev.find(row.line); d != in_dev.end()) {
      check_row(edits.path, row, *drawn_dev, d->second, labels);
      ++left_in_dev;
    } else {
      throw DataError(edits.path, row.file_line,
                      "line " + std::to_string(row.line) + " of " + train.path +
                          " holds no training title (a blank or "
                          "skipped line, or past its end): the audit was made of another file");
    }
  }
  if (edits.use == AuditUse::kExclude) train = without(train, dropped);
  if (train.size() == 0) throw DataError(edits.path, 0, "it excludes every training title");
  const char* done = edits.use == AuditUse::kExclude ? "excluded" : "relabelled";
  spdlog::info(
      "{}: {} {} training titles{}", edits.path, done, edited,
      left_in_dev > 0 ? fmt::format(" ({} flagged titles of the dev split left as they are)", left_in_dev) : "");
  nlohmann::json facts = {{"file", edits.path},
                          {"sha256", sha256_file_hex(edits.path)},
                          {"use", use_name(edits.use)},
                          {"rows", rows.size()},
                          {"left_in_dev", left_in_dev}};
  facts[done] = edited;
  return facts;
}

std::string audited_fingerprint(const std::string& data_sha256, const nlohmann::json& audit_facts) {
  const std::string& use = audit_facts.at("use").get_ref<const std::string&>();
  return sha256_hex(data_sha256 + " " + use + " " + audit_facts.at("sha256").get_ref<const std::string&>());
}

}  // namespace newscls
