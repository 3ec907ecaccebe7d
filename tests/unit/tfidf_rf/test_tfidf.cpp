// TF-IDF on a hand-computed toy corpus (3 documents, terms a, b, c):
//   d1 = a b a, d2 = b c, d3 = b  ->  df(a)=1, df(b)=3, df(c)=1, n=3
//   idf(a) = idf(c) = ln(4/2) + 1 = 1.6931472,  idf(b) = ln(4/4) + 1 = 1
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tfidf_rf/features.h"
#include "tfidf_rf/settings.h"
#include "tfidf_rf/tfidf.h"
#include "tfidf_rf/tfidf_rf.h"

namespace newscls::tfidf_rf {
namespace {

using Docs = std::vector<std::vector<std::string>>;

const Docs kDocs = {{"a", "b", "a"}, {"b", "c"}, {"b"}};

TfidfVectorizer fitted(TfidfOptions options, const Docs& docs = kDocs) {
  TfidfVectorizer v(options);
  for (const auto& d : docs) v.count(d);
  v.finish_fit();
  return v;
}

TEST(Tfidf, SmoothedIdfAndSortedVocabulary) {
  TfidfVectorizer v = fitted({1, 0, true});
  ASSERT_EQ(v.vocabulary().terms(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_NEAR(v.idf()[0], 1.6931472f, 1e-6);
  EXPECT_NEAR(v.idf()[1], 1.0f, 1e-6);
  EXPECT_NEAR(v.idf()[2], 1.6931472f, 1e-6);
  EXPECT_EQ(v.num_documents(), 3u);
}

TEST(Tfidf, SublinearWeightsAreL2Normalised) {
  TfidfVectorizer v = fitted({1, 0, true});
  SparseRow row;
  // d1: a has tf 2 -> (1 + ln 2) * 1.6931472 = 2.8667474, b -> 1; norm 3.0361555
  v.transform(kDocs[0], row);
  ASSERT_EQ(row.size(), 2u);
  EXPECT_EQ(row[0].first, 0);
  EXPECT_NEAR(row[0].second, 0.9442031f, 1e-6);
  EXPECT_EQ(row[1].first, 1);
  EXPECT_NEAR(row[1].second, 0.3293639f, 1e-6);
  // d2: b -> 1, c -> 1.6931472; norm 1.9664047
  v.transform(kDocs[1], row);
  ASSERT_EQ(row.size(), 2u);
  EXPECT_EQ(row[1].first, 2);
  EXPECT_NEAR(row[0].second, 0.5085423f, 1e-6);
  EXPECT_NEAR(row[1].second, 0.8610370f, 1e-6);
}

TEST(Tfidf, WithoutL2NormATermWeighsTheSameInShortAndLongTitles) {
  TfidfVectorizer v = fitted({1, 0, true, false});
  SparseRow row;
  v.transform({"b"}, row);  // b: idf 1
  ASSERT_EQ(row.size(), 1u);
  EXPECT_NEAR(row[0].second, 1.0f, 1e-6);
  v.transform({"a", "a", "b", "c"}, row);  // a: (1 + ln 2) * 1.6931472, b: 1, c: 1.6931472
  ASSERT_EQ(row.size(), 3u);
  EXPECT_NEAR(row[0].second, 2.8667474f, 1e-6);
  EXPECT_NEAR(row[1].second, 1.0f, 1e-6);
  EXPECT_NEAR(row[2].second, 1.6931472f, 1e-6);
  TfidfVectorizer loaded = TfidfVectorizer::from_parts(v.vocabulary(), v.idf(), true, false);
  SparseRow again;
  loaded.transform({"a", "a", "b", "c"}, again);
  EXPECT_EQ(again, row);
}

TEST(TfidfRfSettings, BundlesWithoutTheNewKeysKeepL2AndPunctuation) {
  nlohmann::json config = default_config();
  config["l2_normalize"] = false;
  config["fold_punctuation"] = true;
  EXPECT_FALSE(parse_settings(config).tfidf.l2_normalize);
  EXPECT_TRUE(parse_settings(config).tokens.fold_punctuation);
  config.erase("fold_punctuation");
  config.erase("l2_normalize");
  EXPECT_TRUE(parse_settings(config).tfidf.l2_normalize);
  EXPECT_FALSE(parse_settings(config).tokens.fold_punctuation);
}

TEST(Tfidf, RawTermFrequency) {
  TfidfVectorizer v = fitted({1, 0, false});
  SparseRow row;
  // d1: a -> 2 * 1.6931472 = 3.3862944, b -> 1; norm 3.5308624
  v.transform(kDocs[0], row);
  ASSERT_EQ(row.size(), 2u);
  EXPECT_NEAR(row[0].second, 0.9590559f, 1e-6);
  EXPECT_NEAR(row[1].second, 0.2832169f, 1e-6);
}

TEST(Tfidf, MinDfAndMaxFeaturesPrune) {
  EXPECT_EQ(fitted({2, 0, true}).vocabulary().terms(), (std::vector<std::string>{"b"}));
  // total counts: a 2, b 3, c 1 -> the two most frequent are b and a, stored in term order
  EXPECT_EQ(fitted({1, 2, true}).vocabulary().terms(), (std::vector<std::string>{"a", "b"}));
  // a tie in total count is broken by the term, so the choice is deterministic
  EXPECT_EQ(fitted({1, 1, true}, {{"y"}, {"x"}}).vocabulary().terms(), (std::vector<std::string>{"x"}));
}

TEST(Tfidf, UnknownTermsIgnoredAndEmptyRows) {
  TfidfVectorizer v = fitted({2, 0, true});
  SparseRow row;
  v.transform({"zzz", "a"}, row);
  EXPECT_TRUE(row.empty());
  v.transform({"b", "zzz"}, row);
  ASSERT_EQ(row.size(), 1u);
  EXPECT_NEAR(row[0].second, 1.0f, 1e-6);
}

TEST(Tfidf, FromPartsMatchesFitted) {
  TfidfVectorizer v = fitted({1, 0, true});
  TfidfVectorizer w = TfidfVectorizer::from_parts(v.vocabulary(), v.idf(), true);
  SparseRow a, b;
  v.transform(kDocs[0], a);
  w.transform(kDocs[0], b);
  EXPECT_EQ(a, b);
  EXPECT_EQ(w.index_of("c"), 2);
  EXPECT_EQ(w.index_of("d"), -1);
}

TEST(TitleTokens, CharacterNgramsOfNormalisedTitle) {
  TitleTokenizer tok({1, 2}, nullptr);
  std::vector<std::string> tokens;
  tok.tokens("ＮＢ季", tokens);  // normalised to "nb季"
  EXPECT_EQ(tokens, (std::vector<std::string>{"n", "nb", "b", "b季", "季"}));
}

}  // namespace
}  // namespace newscls::tfidf_rf
