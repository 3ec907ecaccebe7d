#include "bert/tokens/vocab.h"

#include <algorithm>
#include <utility>

#include "newscls/core/binary_io.h"
#include "newscls/core/error.h"
#include "newscls/core/utf8.h"
#include "newscls/text/normalize.h"

namespace newscls::bert {
namespace {

constexpr char kMagic[4] = {'N', 'C', 'B', 'V'};
constexpr std::uint32_t kVersion = 1;

std::vector<std::string> special_tokens() { return {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}; }

// Each character of the normalised titles with its count, most frequent first; ties by bytes,
// so that a vocabulary never depends on hash order.
std::vector<std::pair<std::string, std::int64_t>> characters_by_count(const std::vector<std::string>& titles) {
  std::unordered_map<std::string, std::int64_t> counts;
  for (const std::string& title : titles) {
    const std::string text = normalize_title(title);  // the views below point into it
    for (std::string_view ch : split_utf8_chars(text)) ++counts[std::string(ch)];
  }
  std::vector<std::pair<std::string, std::int64_t>> sorted(counts.begin(), counts.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  return sorted;
}

}  // namespace

CharVocab CharVocab::build(const std::vector<std::string>& titles, int min_count, int max_size) {
  std::vector<std::string> tokens = special_tokens();
  for (const auto& [ch, count] : characters_by_count(titles)) {
    if (count < min_count || static_cast<int>(tokens.size()) >= max_size) break;
    tokens.push_back(ch);
  }
  // Every title would read as [UNK]s: nothing to learn, and the masking's random-token draw
  // would have no character to pick.
  if (tokens.size() == special_tokens().size()) {
    throw ConfigError("vocab_min_count", "no character occurs " + std::to_string(min_count) + " times or more in the " +
                                             std::to_string(titles.size()) + " training titles; lower vocab_min_count");
  }
  return from_tokens(std::move(tokens), "training titles");
}

CharVocab CharVocab::grown(const std::vector<std::string>& titles, int min_count, int max_size) const {
  std::vector<std::string> tokens = tokens_;
  for (const auto& [ch, count] : characters_by_count(titles)) {
    if (count < min_count || static_cast<int>(tokens.size()) >= max_size) break;
    if (ids_.count(ch) == 0) tokens.push_back(ch);
  }
  return from_tokens(std::move(tokens), "grown vocabulary");
}

CharVocab CharVocab::from_tokens(std::vector<std::string> tokens, const std::string& origin) {
  const auto specials = special_tokens();
  if (tokens.size() < specials.size() || !std::equal(specials.begin(), specials.end(), tokens.begin())) {
    throw ModelFormatError(origin, "vocabulary does not start with the special tokens");
  }
  CharVocab v;
  v.tokens_ = std::move(tokens);
  for (std::size_t i = 0; i < v.tokens_.size(); ++i) {
    if (!v.ids_.emplace(v.tokens_[i], static_cast<std::int64_t>(i)).second) {
      throw ModelFormatError(origin, "duplicate vocabulary entry '" + v.tokens_[i] + "'");
    }
  }
  return v;
}

CharVocab CharVocab::load(const std::string& path) {
  PayloadReader r(path, kMagic, kVersion);
  const std::uint64_t n = r.count(8);
  std::vector<std::string> tokens;
  tokens.reserve(n);
  for (std::uint64_t i = 0; i < n; ++i) tokens.push_back(r.str());
  r.expect_end();
  return from_tokens(std::move(tokens), path);
}

void CharVocab::save(const std::string& path) const {
  PayloadWriter w(path, kMagic, kVersion);
  w.u64(tokens_.size());
  for (const std::string& t : tokens_) w.str(t);
  w.finish();
}

std::vector<std::int64_t> CharVocab::encode(const std::string& title, std::int64_t max_len,
                                            bool fold_punctuation) const {
  std::vector<std::int64_t> ids{kCls};
  const std::string text = normalize_title(title, fold_punctuation);
  for (std::string_view ch : split_utf8_chars(text)) {
    if (static_cast<std::int64_t>(ids.size()) + 1 >= max_len) break;
    auto it = ids_.find(std::string(ch));
    ids.push_back(it == ids_.end() ? kUnk : it->second);
  }
  ids.push_back(kSep);
  return ids;
}

std::vector<std::string> CharVocab::tokens_of(const std::vector<std::int64_t>& ids) const {
  std::vector<std::string> out;
  out.reserve(ids.size());
  for (std::int64_t id : ids) out.push_back(id >= 0 && id < size() ? tokens_[id] : "[UNK]");
  return out;
}

}  // namespace newscls::bert
