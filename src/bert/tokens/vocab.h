// Character vocabulary and the title -> token id encoding shared by training and prediction.
//
// Titles are normalised (normalize_title) and split into UTF-8 characters; characters seen
// at least min_count times in the training titles get an id, the rest map to [UNK].
// Ids 0..4 are [PAD], [UNK], [CLS], [SEP], [MASK]. Payload layout ("NCBV", version 1):
// u64 token count, then each token as a string (u64 length + bytes).
//
//   CharVocab v = CharVocab::build(train_titles, 2, 8000);
//   std::vector<std::int64_t> ids = v.encode("ＮＢＡ季后赛", 64);   // [CLS] n b a ... [SEP]
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace newscls::bert {

constexpr std::int64_t kPad = 0, kUnk = 1, kCls = 2, kSep = 3, kMask = 4;
constexpr std::int64_t kNumSpecial = 5;

// What masked-language modelling corrupts titles with: the ids it never masks, the mask, and
// the first id a random replacement is drawn from (up to the vocabulary's last).
struct MaskIds {
  std::int64_t pad = kPad, cls = kCls, sep = kSep, mask = kMask, first_random = kNumSpecial;
};

// Titles as token ids, a row per title.
using Encoded = std::vector<std::vector<std::int64_t>>;

// Each title's ids by a tokenizer (CharVocab, TitleTokenizer); with limit > 0, the first
// `limit` titles only.
template <typename Tokenizer>
Encoded encode_titles(const Tokenizer& tokenizer, const std::vector<std::string>& titles, std::int64_t max_len,
                      std::size_t limit = 0) {
  const std::size_t n = limit > 0 ? std::min(limit, titles.size()) : titles.size();
  Encoded out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) out.push_back(tokenizer.encode(titles[i], max_len));
  return out;
}

class CharVocab {
 public:
  static CharVocab build(const std::vector<std::string>& titles, int min_count, int max_size);
  static CharVocab from_tokens(std::vector<std::string> tokens, const std::string& origin);
  static CharVocab load(const std::string& path);
  // This vocabulary with the characters of `titles` it lacks appended, those seen at least
  // min_count times, most frequent first, while it has fewer than max_size tokens: ids it
  // gave keep their meaning, so a trained encoder's table only grows.
  CharVocab grown(const std::vector<std::string>& titles, int min_count, int max_size) const;
  void save(const std::string& path) const;

  // [CLS] chars... [SEP], truncated to max_len ids in total; fold_punctuation: see
  // normalize_title (the vocabulary is built without it, so it fits either way).
  std::vector<std::int64_t> encode(const std::string& title, std::int64_t max_len, bool fold_punctuation = false) const;
  // The token strings of encode(), for attention dumps.
  std::vector<std::string> tokens_of(const std::vector<std::int64_t>& ids) const;
  std::int64_t size() const { return static_cast<std::int64_t>(tokens_.size()); }
  const std::vector<std::string>& tokens() const { return tokens_; }

 private:
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, std::int64_t> ids_;
};

}  // namespace newscls::bert
