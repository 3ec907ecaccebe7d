// Labelled titles in the formats people have: TSV, CSV, JSON Lines and fastText, read record
// by record (memory grows with the titles kept, not with the file).
//
//   title<TAB>label                 .tsv .txt   (the label is after the last tab)
//   CSV with a header row           .csv        (RFC 4180: quoted fields with commas, quotes
//                                                "" and newlines; columns by name)
//   {"text": ..., "label": ...}     .jsonl .json (one object per line; keys configurable)
//   __label__NAME title             .ft .fasttext
//
// Every format: a UTF-8 BOM and CRLF line ends are accepted, blank lines are skipped, a text
// is one line (a newline or tab inside a CSV or JSON text becomes a space). A label is a
// string; see label_id_of for how a class list reads it. A record that is bad but whose
// end is known (empty text, ragged CSV row, malformed JSON line) is returned with a problem,
// which a caller throws as DataError or skips (--skip-bad-lines); an unterminated CSV quote
// has no known end and always throws.
//
//   RecordReader reader("train.csv", FormatOptions{});
//   for (RawRecord r; reader.next(r);) if (r.problem.empty()) use(r.text, r.label);
#pragma once

#include <cstddef>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "newscls/core/data.h"

namespace newscls {

enum class DataFormat { kTsv, kCsv, kJsonl, kFastText };

struct FormatOptions {
  std::string format;                // "" = by the file's extension; else tsv, csv, jsonl, fasttext
  std::string text_column = "text";  // CSV column or JSON key of the title
  std::string label_column = "label";
};

// The names --format accepts, in help order.
const std::vector<std::string>& data_format_names();
const char* to_string(DataFormat format);
// format named (a UsageError when unknown), else by extension; any other extension is TSV.
DataFormat format_of(const std::string& path, const std::string& format);

struct RawRecord {
  std::string text, label;
  std::size_t line = 0;  // 1-based line where the record starts
  std::string problem;   // non-empty: the record is bad, and this says why
};

class InputFile;     // the file, read byte by byte
class RecordSource;  // one per format

class RecordReader {
 public:
  RecordReader(const std::string& path, const FormatOptions& options);
  ~RecordReader();
  RecordReader(const RecordReader&) = delete;
  RecordReader& operator=(const RecordReader&) = delete;

  // False at the end of the file. A good record has an empty problem, a non-blank valid
  // UTF-8 text and a non-empty label.
  bool next(RawRecord& record);
  DataFormat format() const { return format_; }

 private:
  DataFormat format_;
  std::unique_ptr<InputFile> input_;
  std::unique_ptr<RecordSource> source_;  // reads input_: destroyed first
};

// A field as a CSV file holds it (RFC 4180), so that RecordReader reads it back unchanged:
// quoted when it has a comma, a quote, a line break or a space at either end.
std::string csv_field(const std::string& field);

// Limits on a class list, wherever it comes from.
constexpr int kMinClasses = 2;
constexpr int kMaxClasses = 1000;

// With a class list, a label is a class's name; failing that, a whole number is a class's id
// (its 0-based place in the list, as class.txt's line numbers). -1 when it is neither.
int label_id_of(const LabelSet& labels, const std::string& label);

// The class list of a training file without one: its labels' names, sorted (by value when
// every name is a whole number, so "2" comes before "10"; else by their UTF-8 bytes).
// DataError naming path for fewer than 2 classes or more than 1,000.
LabelSet class_list_of(std::vector<std::string> names, const std::string& path);

// Reads a labelled file whose labels are resolved against labels (label_id_of).
Dataset read_records(const std::string& path, const LabelSet& labels, const FormatOptions& format,
                     const ReadOptions& options);

struct NamedRecords {
  Dataset data;
  LabelSet labels;  // class_list_of the file's label names
};
// Reads a labelled file whose label names make the class list (every label is a name,
// digits too).
NamedRecords read_records_naming_classes(const std::string& path, const FormatOptions& format,
                                         const ReadOptions& options);

// Where a training run's labelled files are, when not in a --data folder: train alone, or with
// dev and test, each in any format; the class list from classes (class.txt's layout) or, when
// that is empty, from train's label names.
struct DataFiles {
  std::string train, dev, test;  // train "" = none given
  std::string classes;
  FormatOptions format;
  // Without dev: this share of train, stratified by class and drawn with the run's seed.
  double dev_fraction = 0.1;
  bool given() const { return !train.empty(); }
};

}  // namespace newscls
