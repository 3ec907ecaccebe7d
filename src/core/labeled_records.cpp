// Datasets from RecordReader's records: labels resolved against a class list, or the class
// list made from the labels' names.
#include <algorithm>
#include <unordered_map>

#include <spdlog/spdlog.h>

#include "newscls/core/error.h"
#include "newscls/core/record_reader.h"
#include "newscls/core/utf8.h"

namespace newscls {
namespace {

bool is_whole_number(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

// "0007" as "7": the digits that count.
std::string significant_digits(const std::string& s) {
  const std::size_t first = std::min(s.find_first_not_of('0'), s.size() - 1);
  return s.substr(first);
}

bool by_value(const std::string& a, const std::string& b) {
  const std::string x = significant_digits(a), y = significant_digits(b);
  if (x.size() != y.size()) return x.size() < y.size();
  return x != y ? x < y : a < b;
}

std::string unknown_label(const LabelSet& labels, const std::string& label) {
  std::string names;
  for (int i = 0; i < std::min(labels.size(), 8); ++i) names += (i == 0 ? "" : ", ") + labels.names[i];
  if (labels.size() > 8) names += ", ...";
  return "label '" + quoted_for_message(label, 40) + "' is neither one of the " + std::to_string(labels.size()) +
         " classes (" + names + ") nor a class id 0.." + std::to_string(labels.size() - 1);
}

// A bad record: thrown, or (--skip-bad-lines) counted and logged.
void refuse_or_skip(Dataset& data, const RawRecord& r, const ReadOptions& options) {
  if (!options.skip_bad_lines) throw DataError(data.path, r.line, r.problem);
  spdlog::warn("{}:{}: skipped: {}", data.path, r.line, r.problem);
  ++data.skipped_lines;
}

void keep(Dataset& data, RawRecord& r, int label) {
  data.titles.push_back(std::move(r.text));
  data.labels.push_back(label);
  data.line_numbers.push_back(r.line);
}

void finish(const Dataset& data) {
  if (data.titles.empty()) throw DataError(data.path, 0, "no usable records");
  if (data.skipped_lines > 0) spdlog::warn("{}: skipped {} bad records", data.path, data.skipped_lines);
}

}  // namespace

int label_id_of(const LabelSet& labels, const std::string& label) {
  const int named = labels.id_of(label);
  if (named >= 0 || !is_whole_number(label)) return named;
  const std::string digits = significant_digits(label);
  if (digits.size() > 4) return -1;  // more classes than kMaxClasses
  const int id = std::stoi(digits);
  return id < labels.size() ? id : -1;
}

LabelSet class_list_of(std::vector<std::string> names, const std::string& path) {
  if (names.size() < static_cast<std::size_t>(kMinClasses)) {
    throw DataError(path, 0,
                    "one class only" + (names.empty() ? std::string() : " ('" + names[0] + "')") +
                        ": a classifier needs titles of at least 2 classes");
  }
  if (names.size() > static_cast<std::size_t>(kMaxClasses)) {
    throw DataError(
        path, 0,
        std::to_string(names.size()) + " classes; newscls takes 2 to 1,000 (is the label column the right one?)");
  }
  const bool numbers = std::all_of(names.begin(), names.end(), is_whole_number);
  if (numbers)
    std::sort(names.begin(), names.end(), by_value);
  else
    std::sort(names.begin(), names.end());
  return LabelSet{std::move(names)};
}

Dataset read_records(const std::string& path, const LabelSet& labels, const FormatOptions& format,
                     const ReadOptions& options) {
  RecordReader reader(path, format);
  Dataset data;
  data.path = path;
  for (RawRecord r; reader.next(r);) {
    const int id = r.problem.empty() ? label_id_of(labels, r.label) : -1;
    if (r.problem.empty() && id < 0) r.problem = unknown_label(labels, r.label);
    if (r.problem.empty())
      keep(data, r, id);
    else
      refuse_or_skip(data, r, options);
  }
  finish(data);
  return data;
}

NamedRecords read_records_naming_classes(const std::string& path, const FormatOptions& format,
                                         const ReadOptions& options) {
  RecordReader reader(path, format);
  NamedRecords out;
  out.data.path = path;
  std::unordered_map<std::string, int> seen;  // name -> order of first appearance
  std::vector<std::string> names;
  for (RawRecord r; reader.next(r);) {
    if (!r.problem.empty()) {
      refuse_or_skip(out.data, r, options);
      continue;
    }
    const auto [at, added] = seen.emplace(r.label, static_cast<int>(names.size()));
    if (added) names.push_back(r.label);
    if (names.size() > static_cast<std::size_t>(kMaxClasses)) {  // stopped before the names fill memory
      throw DataError(path, r.line,
                      "more than 1,000 distinct labels; newscls takes 2 to 1,000 classes "
                      "(is the label column the right one?)");
    }
    keep(out.data, r, at->second);
  }
  finish(out.data);
  out.labels = class_list_of(names, path);
  std::vector<int> sorted_id(names.size());
  for (std::size_t i = 0; i < names.size(); ++i) sorted_id[i] = out.labels.id_of(names[i]);
  for (int& label : out.data.labels) label = sorted_id[static_cast<std::size_t>(label)];
  return out;
}

}  // namespace newscls
