#include "fasttext/features.h"

#include <algorithm>
#include <utility>

#include "newscls/core/utf8.h"

namespace newscls::fasttext {
namespace {

constexpr std::uint64_t kFnvOffset = 14695981039346656037ull;
constexpr std::uint64_t kFnvPrime = 1099511628211ull;
const std::uint64_t kSpaceHash = char_hash(" ");

std::uint64_t mix64(std::uint64_t x) {
  // splitmix64 finaliser: spreads the combined hash over all bits before the modulo.
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

// The character hashes of a title; titles are short, so they usually fit on the stack.
class CharHashes {
 public:
  explicit CharHashes(std::string_view text) {
    const std::vector<std::string_view> chars = split_utf8_chars(text);
    size_ = chars.size();
    if (size_ > kStack) heap_.resize(size_);
    std::uint64_t* h = data();
    for (std::size_t i = 0; i < size_; ++i) h[i] = char_hash(chars[i]);
  }
  std::uint64_t* data() { return size_ > kStack ? heap_.data() : stack_; }
  std::size_t size() const { return size_; }

 private:
  static constexpr std::size_t kStack = 256;
  std::uint64_t stack_[kStack];
  std::vector<std::uint64_t> heap_;
  std::size_t size_ = 0;
};

}  // namespace

std::uint64_t char_hash(std::string_view ch) {
  std::uint64_t h = kFnvOffset;
  for (unsigned char c : ch) {
    h ^= c;
    h *= kFnvPrime;
  }
  return h;
}

std::uint32_t ngram_bucket(const std::uint64_t* h, int n, std::uint32_t buckets) {
  std::uint64_t g = static_cast<std::uint64_t>(n) * 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < n; ++i) g = mix64(g ^ h[i]);
  return static_cast<std::uint32_t>(g % buckets);
}

std::uint32_t skip_bigram_bucket(std::uint64_t first, std::uint64_t third, std::uint32_t buckets) {
  // A seed no contiguous order uses keeps "a_c" apart from the bigram "ac".
  std::uint64_t g = 0x51ed270b27d1c5a9ull;
  g = mix64(g ^ first);
  g = mix64(g ^ third);
  return static_cast<std::uint32_t>(g % buckets);
}

template <typename Fn>
void FeatureExtractor::for_each_bucket(const std::uint64_t* h, std::size_t n, Fn fn) const {
  for (int order = 2; order <= options_.ngram_max; ++order) {
    for (std::size_t i = 0; i + static_cast<std::size_t>(order) <= n; ++i) {
      fn(ngram_bucket(h + i, order, options_.buckets));
    }
  }
  if (options_.skip_bigrams) {
    for (std::size_t i = 0; i + 2 < n; ++i) fn(skip_bigram_bucket(h[i], h[i + 2], options_.buckets));
  }
}

std::vector<std::string> FeatureExtractor::count_tokens(const std::vector<std::string>& normalized_titles) const {
  struct Entry {
    std::string token;
    std::size_t count = 0, first = 0;
  };
  std::unordered_map<std::uint64_t, Entry> counts;
  std::size_t order = 0;
  for (const std::string& title : normalized_titles) {
    for (std::string_view ch : split_utf8_chars(title)) {
      const std::uint64_t h = char_hash(ch);
      if (h == kSpaceHash) continue;
      auto [it, inserted] = counts.try_emplace(h);
      if (inserted) it->second = Entry{std::string(ch), 0, order++};
      ++it->second.count;
    }
  }
  std::vector<Entry> kept;
  for (auto& [hash, entry] : counts) {
    if (entry.count >= static_cast<std::size_t>(options_.min_count)) kept.push_back(std::move(entry));
  }
  std::sort(kept.begin(), kept.end(),
            [](const Entry& a, const Entry& b) { return a.count != b.count ? a.count > b.count : a.first < b.first; });
  std::vector<std::string> tokens;
  tokens.reserve(kept.size());
  for (Entry& e : kept) tokens.push_back(std::move(e.token));
  return tokens;
}

std::vector<std::uint32_t> FeatureExtractor::count_buckets(const std::vector<std::string>& normalized_titles) const {
  std::vector<std::uint32_t> counts(options_.buckets, 0);
  std::vector<std::uint32_t> order;  // buckets in order of first appearance
  for (const std::string& title : normalized_titles) {
    CharHashes h(title);
    for_each_bucket(h.data(), h.size(), [&](std::uint32_t b) {
      if (counts[b] == 0) order.push_back(b);
      if (counts[b] < UINT32_MAX) ++counts[b];
    });
  }
  std::vector<std::uint32_t> kept;
  for (std::uint32_t b : order) {
    if (counts[b] >= static_cast<std::uint32_t>(options_.ngram_min_count)) kept.push_back(b);
  }
  return kept;
}

void FeatureExtractor::build(const std::vector<std::string>& normalized_titles) {
  set_tables(count_tokens(normalized_titles), count_buckets(normalized_titles));
}

void FeatureExtractor::set_tables(const std::vector<std::string>& tokens, PayloadArray<std::uint32_t> kept_buckets) {
  tokens_ = tokens;
  token_ids_.clear();
  token_ids_.reserve(tokens_.size());
  for (std::size_t i = 0; i < tokens_.size(); ++i) {
    token_ids_.emplace(char_hash(tokens_[i]), static_cast<std::int32_t>(i));
  }
  kept_buckets_ = std::move(kept_buckets);
  bucket_ids_ = BucketIndex(kept_buckets_, options_.buckets, static_cast<std::int32_t>(tokens_.size()));
}

FeatureExtractor FeatureExtractor::subset(const std::vector<bool>& keep) const {
  std::vector<std::string> tokens;
  std::vector<std::uint32_t> buckets;
  for (std::size_t i = 0; i < tokens_.size(); ++i) {
    if (keep[i]) tokens.push_back(tokens_[i]);
  }
  for (std::size_t i = 0; i < kept_buckets_.size(); ++i) {
    if (keep[tokens_.size() + i]) buckets.push_back(kept_buckets_[i]);
  }
  FeatureExtractor out(options_);
  out.set_tables(tokens, buckets);
  return out;
}

void FeatureExtractor::extract(std::string_view normalized, std::vector<std::int32_t>& out) const {
  CharHashes h(normalized);
  for (std::size_t i = 0; i < h.size(); ++i) {
    auto it = token_ids_.find(h.data()[i]);
    if (it != token_ids_.end()) out.push_back(it->second);
  }
  for_each_bucket(h.data(), h.size(), [&](std::uint32_t b) {
    const std::int32_t id = bucket_ids_.find(b);
    if (id >= 0) out.push_back(id);
  });
}

}  // namespace newscls::fasttext
