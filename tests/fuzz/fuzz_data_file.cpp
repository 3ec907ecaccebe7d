// Fuzzes the data-file readers on a file holding the input: read_labeled_file (strict and
// skipping bad lines), TitleReader, read_class_file and read_feed (an adaptation's feed). Each must either return data
// that keeps its documented promises or throw DataError/IoError; anything else is a finding.
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "fuzz_support.h"
#include "newscls/core/data.h"
#include "newscls/core/error.h"
#include "newscls/core/feed.h"
#include "newscls/core/utf8.h"

namespace {

using newscls::DataError;
using newscls::IoError;

constexpr int kNumLabels = 10;

bool is_blank(const std::string& s) { return s.find_first_not_of(" \t\r\n\f\v") == std::string::npos; }

// Returns the titles of a strict read, or nothing when the file was refused.
bool read_labeled(const std::string& path, bool skip, newscls::Dataset& out) {
  try {
    out = newscls::read_labeled_file(path, kNumLabels, {skip});
  } catch (const DataError&) {
    return false;
  } catch (const IoError&) {
    return false;
  }
  NEWSCLS_FUZZ_CHECK(!out.titles.empty());
  NEWSCLS_FUZZ_CHECK(out.titles.size() == out.labels.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    NEWSCLS_FUZZ_CHECK(out.labels[i] >= 0 && out.labels[i] < kNumLabels);
    NEWSCLS_FUZZ_CHECK(newscls::is_valid_utf8(out.titles[i]));
    NEWSCLS_FUZZ_CHECK(!is_blank(out.titles[i]));
    NEWSCLS_FUZZ_CHECK(out.titles[i].find('\n') == std::string::npos);
  }
  if (!skip) NEWSCLS_FUZZ_CHECK(out.skipped_lines == 0);
  return true;
}

// Reads every title; a title is valid UTF-8 and holds no line break.
bool read_titles(const std::string& path, std::size_t input_size, std::vector<std::string>& titles) {
  try {
    newscls::TitleReader reader(path);
    std::string title;
    while (reader.next(title)) {
      NEWSCLS_FUZZ_CHECK(newscls::is_valid_utf8(title));
      NEWSCLS_FUZZ_CHECK(title.find('\n') == std::string::npos);
      NEWSCLS_FUZZ_CHECK(reader.line_number() == titles.size() + 1);
      NEWSCLS_FUZZ_CHECK(titles.size() <= input_size);
      titles.push_back(title);
    }
  } catch (const DataError&) {
    return false;
  } catch (const IoError&) {
    return false;
  }
  return true;
}

void read_classes(const std::string& path) {
  try {
    const newscls::LabelSet labels = newscls::read_class_file(path);
    NEWSCLS_FUZZ_CHECK(labels.size() >= 2);
    for (int i = 0; i < labels.size(); ++i) {
      NEWSCLS_FUZZ_CHECK(newscls::is_valid_utf8(labels.names[i]));
      NEWSCLS_FUZZ_CHECK(!is_blank(labels.names[i]));
      NEWSCLS_FUZZ_CHECK(labels.id_of(labels.names[i]) == i);  // unique
    }
  } catch (const DataError&) {
  } catch (const IoError&) {
  }
}

// A feed read skipping bad lines: distinct, visible UTF-8 titles of one line each, no tab, none
// over the length limit, and every line counted once; or refused as holding no title.
void read_feed(const std::string& path) {
  newscls::FeedOptions options;
  options.skip_bad_lines = true;
  options.max_titles = 8;
  try {
    const newscls::Feed feed = newscls::read_feed(path, options);
    std::set<std::string> seen;
    for (const std::string& t : feed.titles) {
      NEWSCLS_FUZZ_CHECK(newscls::is_valid_utf8(t) && !newscls::is_blank_title(t));
      NEWSCLS_FUZZ_CHECK(t.find_first_of("\n\t") == std::string::npos && t.size() <= newscls::kMaxFeedTitleBytes);
      NEWSCLS_FUZZ_CHECK(seen.insert(t).second);
    }
    NEWSCLS_FUZZ_CHECK(feed.titles.size() <= options.max_titles);
    NEWSCLS_FUZZ_CHECK(
        feed.titles.size() + feed.blank + feed.duplicates + feed.too_long + feed.bad + feed.sampled_out == feed.lines);
  } catch (const DataError&) {
  } catch (const IoError&) {
  }
}

}  // namespace

// Skipped lines are logged as warnings; thousands of runs a second would flood the output.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = newscls::fuzz::write_input("data.txt", data, size);
  newscls::Dataset strict, lenient;
  const bool strict_ok = read_labeled(path, false, strict);
  const bool lenient_ok = read_labeled(path, true, lenient);
  if (strict_ok) {
    // A file good line by line reads the same whichever way it is read.
    NEWSCLS_FUZZ_CHECK(lenient_ok);
    NEWSCLS_FUZZ_CHECK(lenient.titles == strict.titles && lenient.labels == strict.labels);
    // predict answers a blank line (nothing visible) as blank; a labelled file passes over it.
    std::vector<std::string> titles, visible;
    NEWSCLS_FUZZ_CHECK(read_titles(path, size, titles));
    for (const std::string& t : titles) {
      if (!newscls::is_blank_title(t)) visible.push_back(t);
    }
    NEWSCLS_FUZZ_CHECK(visible == strict.titles);
  } else {
    std::vector<std::string> titles;
    read_titles(path, size, titles);
  }
  read_classes(path);
  read_feed(path);
  return 0;
}
