// Fuzzes the labelled-file formats (newscls/core/record_reader.h): the input's first byte picks
// TSV, CSV, JSON Lines or fastText, the rest is the file. Reading it naming its classes and
// against a fixed class list must either return records that keep the documented promises or
// throw DataError; a strict read that succeeds reads the same when bad records are skipped.
#include <cstdint>
#include <string>

#include <spdlog/spdlog.h>

#include "fuzz_support.h"
#include "newscls/core/error.h"
#include "newscls/core/record_reader.h"
#include "newscls/core/utf8.h"

namespace {

using newscls::DataError;

void check_records(const newscls::Dataset& d, int num_labels, bool one_line) {
  NEWSCLS_FUZZ_CHECK(!d.titles.empty());
  NEWSCLS_FUZZ_CHECK(d.titles.size() == d.labels.size() && d.titles.size() == d.line_numbers.size());
  for (std::size_t i = 0; i < d.size(); ++i) {
    NEWSCLS_FUZZ_CHECK(d.labels[i] >= 0 && d.labels[i] < num_labels);
    NEWSCLS_FUZZ_CHECK(newscls::is_valid_utf8(d.titles[i]));
    NEWSCLS_FUZZ_CHECK(!newscls::is_blank_title(d.titles[i]));
    NEWSCLS_FUZZ_CHECK(d.titles[i].find('\n') == std::string::npos);
    if (one_line) NEWSCLS_FUZZ_CHECK(d.titles[i].find_first_of("\r\t") == std::string::npos);
    NEWSCLS_FUZZ_CHECK(d.line_numbers[i] >= 1 && (i == 0 || d.line_numbers[i] > d.line_numbers[i - 1]));
  }
}

bool read_named(const std::string& path, const newscls::FormatOptions& format, bool skip, newscls::NamedRecords& out) {
  try {
    out = newscls::read_records_naming_classes(path, format, {skip});
  } catch (const DataError&) {
    return false;
  }
  NEWSCLS_FUZZ_CHECK(out.labels.size() >= newscls::kMinClasses && out.labels.size() <= newscls::kMaxClasses);
  const bool one_line = format.format == "csv" || format.format == "jsonl";
  check_records(out.data, out.labels.size(), one_line);
  if (!skip) NEWSCLS_FUZZ_CHECK(out.data.skipped_lines == 0);
  return true;
}

void read_against_list(const std::string& path, const newscls::FormatOptions& format) {
  const newscls::LabelSet labels{{"a", "b", "1"}};
  try {
    check_records(newscls::read_records(path, labels, format, {true}), labels.size(), false);
  } catch (const DataError&) {
  }
}

}  // namespace

// Skipped records are logged as warnings; thousands of runs a second would flood the output.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  newscls::FormatOptions format;
  format.format = newscls::data_format_names()[data[0] % 4];
  const std::string path = newscls::fuzz::write_input("records", data + 1, size - 1);
  newscls::NamedRecords strict, lenient;
  const bool strict_ok = read_named(path, format, false, strict);
  const bool lenient_ok = read_named(path, format, true, lenient);
  if (strict_ok) {
    NEWSCLS_FUZZ_CHECK(lenient_ok);
    NEWSCLS_FUZZ_CHECK(lenient.data.titles == strict.data.titles && lenient.data.labels == strict.data.labels);
    NEWSCLS_FUZZ_CHECK(lenient.labels.names == strict.labels.names);
  }
  read_against_list(path, format);
  return 0;
}
