// The tfidf-rf bundle's payloads, one file each:
//   tfidf.bin   (tfidf_payload.cpp)   magic "NCTV", version 1: u32 ngram_min, u32 ngram_max,
//               u8 subword, u8 sublinear_tf, u64 n, n strings (sorted, unique terms), f32[n] idf
//   forest.bin  (forest_payload.cpp)  magic "NCRF", RandomForest::kPayloadVersion (see forest.h)
//   subword.bin (subword_payload.cpp) magic "NCSP", version 1: the serialized SentencePiece model
// Loaders check every field and throw ModelFormatError naming the file.
#pragma once

#include <string>

#include "newscls/text/tokenizer.h"
#include "tfidf_rf/forest.h"
#include "tfidf_rf/settings.h"
#include "tfidf_rf/tfidf.h"

namespace newscls::tfidf_rf {

void save_tfidf(const std::string& path, const Settings& settings, const TfidfVectorizer& vectorizer);
// The tokenisation recorded in the file must agree with the manifest's settings.
TfidfVectorizer load_tfidf(const std::string& path, const Settings& settings);

void save_forest(const std::string& path, const RandomForest& forest);
// Refuses a forest without trees.
RandomForest load_forest(const std::string& path);

void save_subword(const std::string& path, const SubwordTokenizer& tokenizer);
SubwordTokenizer load_subword(const std::string& path);

}  // namespace newscls::tfidf_rf
