#include "newscls/core/feed.h"

#include <functional>
#include <string_view>
#include <unordered_map>

#include <spdlog/spdlog.h>

#include "newscls/core/data.h"
#include "newscls/core/error.h"
#include "newscls/core/sha256.h"
#include "newscls/core/splitmix.h"
#include "newscls/core/utf8.h"

namespace newscls {
namespace {

// The distinct titles kept so far, with a reservoir sample once there are max_titles of them.
// Repeats are found among the kept titles only, so memory stays bounded.
class Reservoir {
 public:
  Reservoir(std::size_t capacity, std::uint64_t seed) : capacity_(capacity), state_(seed) {}

  // False when the title is a repeat of a kept one.
  bool offer(std::string title, std::size_t& sampled_out) {
    const std::size_t h = std::hash<std::string_view>{}(title);
    if (is_kept(h, title)) return false;
    ++offered_;
    if (titles_.size() < capacity_) {
      add(h, std::move(title), titles_.size());
      return true;
    }
    ++sampled_out;
    const std::uint64_t j = splitmix64(state_) % offered_;
    if (j < capacity_) {
      forget(titles_[j]);
      add(h, std::move(title), j);
    }
    return true;
  }
  std::vector<std::string> take() { return std::move(titles_); }

 private:
  bool is_kept(std::size_t h, const std::string& title) const {
    auto [first, last] = index_.equal_range(h);
    for (auto it = first; it != last; ++it) {
      if (titles_[it->second] == title) return true;
    }
    return false;
  }
  void add(std::size_t h, std::string title, std::size_t slot) {
    if (slot == titles_.size())
      titles_.push_back(std::move(title));
    else
      titles_[slot] = std::move(title);
    index_.emplace(h, slot);
  }
  void forget(const std::string& title) {
    auto [first, last] = index_.equal_range(std::hash<std::string_view>{}(title));
    for (auto it = first; it != last; ++it) {
      if (titles_[it->second] == title) {
        index_.erase(it);
        return;
      }
    }
  }

  std::size_t capacity_;
  std::uint64_t state_;
  std::uint64_t offered_ = 0;
  std::vector<std::string> titles_;
  std::unordered_multimap<std::size_t, std::size_t> index_;  // title hash -> slot
};

// Empty when the line is text; else what it is.
std::string not_text(const std::string& line) {
  if (line.find('\0') != std::string::npos) return "a NUL byte: a binary or UTF-16 file? the feed is UTF-8 text";
  if (!is_valid_utf8(line)) return "not valid UTF-8: a binary file? the feed is UTF-8 text, one title per line";
  return {};
}

void warn_counts(const Feed& feed) {
  if (feed.with_tab > 0) {
    spdlog::warn("{}: {} line(s) hold a tab; only the text before it is used (a label after it is never read)",
                 feed.path, feed.with_tab);
  }
  if (feed.too_long > 0) {
    spdlog::warn("{}: {} line(s) over {} bytes skipped (not headlines)", feed.path, feed.too_long, kMaxFeedTitleBytes);
  }
  if (feed.sampled_out > 0) {
    spdlog::info("{}: {} distinct titles; a seeded sample of {} kept (max_titles)", feed.path,
                 feed.titles.size() + feed.sampled_out, feed.titles.size());
  }
}

}  // namespace

nlohmann::json Feed::facts() const {
  return {{"path", path},
          {"lines", lines},
          {"titles", titles.size()},
          {"sha256", sha256},
          {"blank_lines", blank},
          {"duplicates", duplicates},
          {"too_long", too_long},
          {"bad_lines", bad},
          {"lines_with_tab", with_tab},
          {"sampled_out", sampled_out}};
}

Feed read_feed(const std::string& path, const FeedOptions& options) {
  TitleReader reader(path);
  Feed feed;
  feed.path = reader.path();
  Sha256Stream digest;
  Reservoir kept(options.max_titles, options.seed);
  for (std::string line; reader.next_line(line);) {
    digest.update(line);
    digest.update("\n");
    ++feed.lines;
    if (const std::size_t tab = line.find('\t'); tab != std::string::npos) {
      line.resize(tab);
      ++feed.with_tab;
    }
    if (const std::string problem = not_text(line); !problem.empty()) {
      if (!options.skip_bad_lines) throw DataError(feed.path, reader.line_number(), problem);
      ++feed.bad;
      continue;
    }
    if (is_blank_title(line)) {
      ++feed.blank;
    } else if (line.size() > kMaxFeedTitleBytes) {
      ++feed.too_long;
    } else if (!kept.offer(std::move(line), feed.sampled_out)) {
      ++feed.duplicates;
    }
  }
  feed.titles = kept.take();
  feed.sha256 = digest.hex();
  if (feed.titles.empty()) {
    throw DataError(
        feed.path, 0,
        "no usable title in " + std::to_string(feed.lines) + " line(s): the feed is one title per line, UTF-8");
  }
  warn_counts(feed);
  return feed;
}

}  // namespace newscls
