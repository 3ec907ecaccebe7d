// The tfidf-rf bundle's payloads, one file each:
//   tfidf.bin   (tfidf_payload.cpp)   magic "NCTV", version 2 (PayloadWriter layout: header
//               fields, then blocks, each at a multiple of its element size after zero padding):
//                 u32 ngram_min, u32 ngram_max, u8 subword, u8 sublinear_tf, u64 n (terms),
//                 u64 term_bytes,
//                 block u32[n + 1]     term offsets into the term bytes: 0, non-decreasing, term_bytes
//                 block u8[term_bytes] the terms end to end, sorted by bytes and unique
//                 block f32[n]         idf (finite, at least 1)
//               loaded as it lies in the file (vocabulary.h), with the index built over it.
//               Version 1 (still read): the same four fields, then u64 n, n strings, f32 array idf.
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
