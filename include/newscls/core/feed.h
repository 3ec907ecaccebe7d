// A reader's own feed: titles of the outlet a model should adapt to, without labels
// (`newscls adapt`, `newscls train --unlabeled`).
//
// One title per line in UTF-8, LF or CRLF, a BOM accepted; "-" reads stdin. The feed is
// streamed: repeated titles are dropped, and past max_titles a seeded reservoir sample keeps
// max_titles of them, so memory does not grow with the file. A line with a tab (a labelled
// file, "title<TAB>label") gives the text before its first tab: the rest is never read, and
// a warning counts such lines. Blank lines and titles over kMaxFeedTitleBytes are skipped and
// counted. A line that is not UTF-8 text (a binary file) is a DataError naming the line, or
// is skipped and counted with skip_bad_lines. A feed with no usable title is a DataError.
//
//   Feed feed = read_feed("my_feed.txt", {});
//   train with feed.titles; write feed.facts() into the manifest
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace newscls {

// Longer lines are not headlines (a pasted article, a binary blob): skipped and counted.
constexpr std::size_t kMaxFeedTitleBytes = 1024;

struct FeedOptions {
  std::size_t max_titles = 200000;
  std::uint64_t seed = 1;  // the reservoir sample's
  bool skip_bad_lines = false;
};

struct Feed {
  std::string path;
  std::vector<std::string> titles;  // distinct, in the order read (a sampled feed: reservoir order)
  std::size_t lines = 0, blank = 0, duplicates = 0, too_long = 0, bad = 0, with_tab = 0, sampled_out = 0;
  std::string sha256;  // of the lines as read, each ended by "\n"
  // path, lines, titles used, sha256 and each count, for the manifest and `info`.
  nlohmann::json facts() const;
};

Feed read_feed(const std::string& path, const FeedOptions& options);

}  // namespace newscls
