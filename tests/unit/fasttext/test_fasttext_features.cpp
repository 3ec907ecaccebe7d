// fasttext features and settings: hashing, tokenisation into ids, config validation.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "fasttext/bucket_index.h"
#include "fasttext/fasttext.h"
#include "fasttext/features.h"
#include "fasttext/settings.h"
#include "newscls/core/atomic_file.h"
#include "newscls/core/config.h"
#include "newscls/core/error.h"
#include "newscls/text/normalize.h"
#include "config_table_checks.h"
#include "test_support.h"

namespace newscls::fasttext {
namespace {

std::vector<std::int32_t> ids_of(const FeatureExtractor& fx, const std::string& title) {
  std::vector<std::int32_t> ids;
  fx.extract(normalize_title(title), ids);
  return ids;
}

TEST(FasttextHash, CharHashIsFnv1a64) {
  // Published FNV-1a 64 test vectors.
  EXPECT_EQ(char_hash(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(char_hash("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_NE(char_hash("中"), char_hash("国"));
}

TEST(FasttextHash, BucketsAreStableInRangeAndOrderAware) {
  const std::uint64_t h[3] = {char_hash("新"), char_hash("闻"), char_hash("网")};
  const std::uint64_t swapped[2] = {h[1], h[0]};
  for (std::uint32_t buckets : {1u, 7u, 1u << 20}) {
    EXPECT_LT(ngram_bucket(h, 2, buckets), buckets);
    EXPECT_LT(skip_bigram_bucket(h[0], h[2], buckets), buckets);
  }
  EXPECT_EQ(ngram_bucket(h, 2, 1u << 20), ngram_bucket(h, 2, 1u << 20));
  EXPECT_NE(ngram_bucket(h, 2, 1u << 20), ngram_bucket(swapped, 2, 1u << 20));
  EXPECT_NE(ngram_bucket(h, 2, 1u << 20), ngram_bucket(h, 3, 1u << 20));
  const std::uint64_t first_third[2] = {h[0], h[2]};
  EXPECT_NE(skip_bigram_bucket(h[0], h[2], 1u << 20), ngram_bucket(first_third, 2, 1u << 20));
}

TEST(FasttextFeatures, VocabularyOrderedByCountWithoutSpaces) {
  FeatureExtractor fx({1, 1, 1024, 1, false});
  fx.build({"b a a", "a c"});
  EXPECT_EQ(fx.tokens(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(fx.rows(), 3);                                            // ngram_max 1: no buckets
  EXPECT_EQ(ids_of(fx, "C A x"), (std::vector<std::int32_t>{2, 0}));  // normalised; 'x' unknown
}

TEST(FasttextFeatures, CountsUnigramsBigramsTrigrams) {
  FeatureExtractor fx({1, 3, 1u << 20, 1, false});
  fx.build({"体育新闻"});
  const auto ids = ids_of(fx, "体育新闻");
  ASSERT_EQ(ids.size(), 4u + 3u + 2u);
  for (int i = 0; i < 4; ++i) EXPECT_LT(ids[i], fx.vocab_size());
  for (std::size_t i = 4; i < ids.size(); ++i) {
    EXPECT_GE(ids[i], fx.vocab_size());
    EXPECT_LT(ids[i], fx.rows());
  }
  // Each distinct n-gram of the training title got its own row (no collision at 2^20).
  EXPECT_EQ(fx.kept_buckets().size(), 5u);
  // An unseen bigram has no row and is left out.
  EXPECT_EQ(ids_of(fx, "新体").size(), 2u);
}

TEST(FasttextFeatures, MinCountsDropRareCharactersAndNgrams) {
  FeatureExtractor fx({2, 2, 1u << 20, 2, false});
  fx.build({"甲乙丙", "甲乙丁"});
  EXPECT_EQ(fx.tokens(), (std::vector<std::string>{"甲", "乙"}));
  EXPECT_EQ(fx.kept_buckets().size(), 1u);  // only "甲乙" appears twice
  EXPECT_EQ(ids_of(fx, "甲乙丙").size(), 3u);
}

TEST(FasttextFeatures, SkipBigramsAddPairsOneApart) {
  FeatureExtractor plain({1, 2, 1u << 20, 1, false});
  FeatureExtractor skip({1, 2, 1u << 20, 1, true});
  plain.build({"abcd"});
  skip.build({"abcd"});
  EXPECT_EQ(ids_of(skip, "abcd").size(), ids_of(plain, "abcd").size() + 2);
}

TEST(FasttextFeatures, SubsetRenumbersKeptRows) {
  FeatureExtractor fx({1, 2, 1u << 20, 1, false});
  fx.build({"ab", "ab", "c"});
  std::vector<bool> keep(static_cast<std::size_t>(fx.rows()), false);
  keep[0] = true;                                          // "a"
  keep[static_cast<std::size_t>(fx.vocab_size())] = true;  // "ab"
  const FeatureExtractor small = fx.subset(keep);
  EXPECT_EQ(small.rows(), 2);
  EXPECT_EQ(ids_of(small, "abc"), (std::vector<std::int32_t>{0, 1}));
}

TEST(FasttextFeatures, SetTablesRejectsBadBuckets) {
  FeatureExtractor fx({1, 2, 16, 1, false});
  EXPECT_THROW(fx.set_tables({"a"}, std::vector<std::uint32_t>{16}), std::invalid_argument);
  EXPECT_THROW(fx.set_tables({"a"}, std::vector<std::uint32_t>{3, 3}), std::invalid_argument);
  EXPECT_THROW(fx.set_tables({"a"}, std::vector<std::uint32_t>{3, 5, 3}), std::invalid_argument);
  EXPECT_THROW(fx.set_tables({"a"}, std::vector<std::uint32_t>{3, 5, 16}), std::invalid_argument);
}

TEST(FasttextBucketIndex, FindsIdsOfSortedAndUnsortedBuckets) {
  const BucketIndex sorted(std::vector<std::uint32_t>{2, 5, 9, 40}, 64, 10);
  EXPECT_EQ(sorted.find(2), 10);
  EXPECT_EQ(sorted.find(5), 11);
  EXPECT_EQ(sorted.find(40), 13);
  for (std::uint32_t absent : {0u, 3u, 6u, 39u, 41u, 63u}) EXPECT_EQ(sorted.find(absent), -1) << absent;
  EXPECT_TRUE(sorted.ids_by_bucket().empty());  // ids already in bucket order: no copy, no ids
  const BucketIndex unsorted(std::vector<std::uint32_t>{9, 2, 40, 5}, 64, 10);
  EXPECT_EQ(unsorted.find(9), 10);
  EXPECT_EQ(unsorted.find(5), 13);
  EXPECT_EQ(unsorted.find(7), -1);
  EXPECT_EQ(unsorted.ids_by_bucket(), (std::vector<std::int32_t>{11, 13, 10, 12}));
  EXPECT_EQ(BucketIndex().find(0), -1);
  EXPECT_EQ(BucketIndex(std::vector<std::uint32_t>{}, 1u << 28, 0).find(12345), -1);
}

TEST(FasttextBucketIndex, FindsEveryKeptBucketAndNoOther) {
  constexpr std::uint32_t kBuckets = 1u << 20;
  std::mt19937 rng(3);
  std::set<std::uint32_t> kept_set;
  while (kept_set.size() < 5000) kept_set.insert(rng() % kBuckets);
  std::vector<std::uint32_t> kept(kept_set.begin(), kept_set.end());
  std::shuffle(kept.begin(), kept.end(), rng);
  const BucketIndex shuffled(kept, kBuckets, 7);
  std::sort(kept.begin(), kept.end());
  const BucketIndex in_order(kept, kBuckets, 7);
  for (std::size_t i = 0; i < kept.size(); ++i) {
    EXPECT_EQ(in_order.find(kept[i]), 7 + static_cast<std::int32_t>(i));
    EXPECT_EQ(shuffled.ids_by_bucket()[i], shuffled.find(kept[i]));
  }
  for (int i = 0; i < 5000; ++i) {
    const std::uint32_t b = rng() % kBuckets;
    if (kept_set.count(b) == 0) {
      EXPECT_EQ(in_order.find(b), -1) << b;
    }
  }
}

TEST(FasttextSettings, DefaultsParseAndRoundTrip) {
  const nlohmann::json defaults = settings_defaults();
  EXPECT_EQ(to_json(parse_settings(defaults)), defaults);
}

TEST(FasttextSettings, BadValuesNameTheKey) {
  nlohmann::json cfg = default_config();
  apply_override(cfg, "loss=hinge");
  try {
    parse_settings(cfg);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("loss"), std::string::npos);
  }
  cfg = default_config();
  cfg["dim"] = 0;
  EXPECT_THROW(parse_settings(cfg), ConfigError);
  cfg = default_config();
  cfg["dropout"] = 0.95;
  EXPECT_THROW(parse_settings(cfg), ConfigError);
}

TEST(FasttextSettings, EachKeyOfTheTableHolds) { testing::expect_table_holds(settings_table(), parse_settings); }

}  // namespace
}  // namespace newscls::fasttext
