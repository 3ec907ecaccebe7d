// The TF-IDF vocabulary as prediction reads it, and tfidf.bin: version 2 (blocks) written and
// read, version 1 still read, malformed vocabularies refused naming the file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "newscls/core/binary_io.h"
#include "newscls/core/error.h"
#include "test_support.h"
#include "tfidf_rf/payloads.h"
#include "tfidf_rf/settings.h"
#include "tfidf_rf/tfidf.h"
#include "tfidf_rf/tfidf_rf.h"
#include "tfidf_rf/vocabulary.h"

namespace newscls::tfidf_rf {
namespace {

TEST(Vocabulary, FindsEveryTermAndNoOther) {
  std::vector<std::string> terms;
  for (int i = 0; i < 3000; ++i) terms.push_back("t" + std::to_string(100000 + i));
  terms.emplace_back("新闻");
  const Vocabulary v(terms);
  ASSERT_EQ(v.size(), terms.size());
  for (std::size_t id = 0; id < terms.size(); ++id) {
    EXPECT_EQ(v.find(terms[id]), static_cast<std::int32_t>(id));
    EXPECT_EQ(v.term(id), terms[id]);
  }
  for (const char* absent : {"", "t", "t99999", "t1000000", "新", "闻"}) EXPECT_EQ(v.find(absent), -1) << absent;
  EXPECT_EQ(v.terms(), terms);
  EXPECT_EQ(Vocabulary().find("a"), -1);
  EXPECT_EQ(Vocabulary().size(), 0u);
}

TEST(Vocabulary, ViewsBlocksAsTheyLie) {
  const Vocabulary v(std::vector<std::uint32_t>{0, 1, 3, 6}, std::vector<char>{'a', 'b', 'c', 'x', 'y', 'z'});
  EXPECT_EQ(v.terms(), (std::vector<std::string>{"a", "bc", "xyz"}));
  EXPECT_EQ(v.find("bc"), 1);
  EXPECT_EQ(v.find("b"), -1);
}

Settings settings() { return parse_settings(default_config()); }  // ngrams 1..2, sublinear tf

TfidfVectorizer fitted() {
  TfidfVectorizer v(settings().tfidf);
  for (const std::vector<std::string>& doc : {std::vector<std::string>{"a", "ab", "b"}, {"b", "bc", "c"}, {"c", "a"}}) {
    v.count(doc);
  }
  v.finish_fit();
  return v;
}

// The version-1 writer this build replaced: such payloads must still load.
void save_v1(const std::string& path, const TfidfVectorizer& v) {
  const Settings s = settings();
  PayloadWriter w(path, "NCTV", 1);
  w.u32(static_cast<std::uint32_t>(s.tokens.ngram_min));
  w.u32(static_cast<std::uint32_t>(s.tokens.ngram_max));
  w.u8(0);
  w.u8(v.sublinear_tf() ? 1 : 0);
  w.u64(v.num_features());
  for (const std::string& term : v.vocabulary().terms()) w.str(term);
  w.f32_array(v.idf().to_vector());
  w.finish();
}

void expect_same_rows(const TfidfVectorizer& a, const TfidfVectorizer& b) {
  for (const std::vector<std::string>& doc : {std::vector<std::string>{"a", "b", "a"}, {"bc", "zz"}, {}}) {
    SparseRow ra, rb;
    a.transform(doc, ra);
    b.transform(doc, rb);
    EXPECT_EQ(ra, rb);
  }
}

TEST(TfidfPayload, BothVersionsLoadTheSameVectoriser) {
  const std::string dir = testing::scratch_dir();
  const TfidfVectorizer v = fitted();
  save_tfidf(dir + "/v2.bin", settings(), v);
  save_v1(dir + "/v1.bin", v);
  const TfidfVectorizer v2 = load_tfidf(dir + "/v2.bin", settings());
  const TfidfVectorizer v1 = load_tfidf(dir + "/v1.bin", settings());
  EXPECT_EQ(v2.vocabulary().terms(), v.vocabulary().terms());
  EXPECT_EQ(v1.vocabulary().terms(), v.vocabulary().terms());
  EXPECT_EQ(v2.idf().to_vector(), v.idf().to_vector());
  expect_same_rows(v, v2);
  expect_same_rows(v, v1);
}

// A version-2 payload by hand with the default settings and an idf of 1 for every term.
std::string write_v2(const std::string& path, const std::vector<std::uint32_t>& offsets, const std::string& bytes) {
  const Settings s = settings();
  PayloadWriter w(path, "NCTV", 2);
  w.u32(static_cast<std::uint32_t>(s.tokens.ngram_min));
  w.u32(static_cast<std::uint32_t>(s.tokens.ngram_max));
  w.u8(0);
  w.u8(1);
  w.u64(offsets.size() - 1);
  w.u64(bytes.size());
  w.block(offsets);
  w.block(bytes.data(), bytes.size());
  w.block(std::vector<float>(offsets.size() - 1, 1.0f));
  w.finish();
  return path;
}

std::string refusal(const std::string& path) {
  try {
    load_tfidf(path, settings());
  } catch (const ModelFormatError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    return e.what();
  }
  return "loaded";
}

TEST(TfidfPayload, MalformedVersion2VocabulariesAreRefused) {
  const std::string dir = testing::scratch_dir();
  EXPECT_EQ(refusal(write_v2(dir + "/good.bin", {0, 1, 3}, "abc")), "loaded");
  EXPECT_THAT(refusal(write_v2(dir + "/span.bin", {0, 1, 2}, "abc")), ::testing::HasSubstr("do not delimit"));
  EXPECT_THAT(refusal(write_v2(dir + "/start.bin", {1, 1, 3}, "abc")), ::testing::HasSubstr("do not delimit"));
  EXPECT_THAT(refusal(write_v2(dir + "/back.bin", {0, 2, 1, 3}, "abc")), ::testing::HasSubstr("do not delimit"));
  // An offset past the bytes, before the one that decreases: refused before any term is read.
  EXPECT_THAT(refusal(write_v2(dir + "/past.bin", {0, 100000, 3}, "abc")), ::testing::HasSubstr("do not delimit"));
  EXPECT_THAT(refusal(write_v2(dir + "/order.bin", {0, 2, 3}, "bca")), ::testing::HasSubstr("not sorted and unique"));
  EXPECT_THAT(refusal(write_v2(dir + "/twice.bin", {0, 1, 2}, "aa")), ::testing::HasSubstr("not sorted and unique"));
}

}  // namespace
}  // namespace newscls::tfidf_rf
