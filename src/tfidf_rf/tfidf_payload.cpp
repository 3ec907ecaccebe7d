#include <cmath>

#include "newscls/core/binary_io.h"
#include "newscls/core/error.h"
#include "tfidf_rf/payloads.h"

namespace newscls::tfidf_rf {
namespace {

constexpr char kMagic[4] = {'N', 'C', 'T', 'V'};
constexpr std::uint32_t kVersion = 1;

}  // namespace

void save_tfidf(const std::string& path, const Settings& settings, const TfidfVectorizer& vectorizer) {
  PayloadWriter w(path, kMagic, kVersion);
  w.u32(static_cast<std::uint32_t>(settings.tokens.ngram_min));
  w.u32(static_cast<std::uint32_t>(settings.tokens.ngram_max));
  w.u8(settings.subword ? 1 : 0);
  w.u8(vectorizer.sublinear_tf() ? 1 : 0);
  w.u64(vectorizer.num_features());
  for (const std::string& term : vectorizer.vocabulary()) w.str(term);
  w.f32_array(vectorizer.idf());
  w.finish();
}

TfidfVectorizer load_tfidf(const std::string& path, const Settings& settings) {
  PayloadReader r(path, kMagic, kVersion);
  const std::uint32_t ngram_min = r.u32(), ngram_max = r.u32();
  const bool subword = r.u8() != 0;
  const bool sublinear = r.u8() != 0;
  if (static_cast<int>(ngram_min) != settings.tokens.ngram_min ||
      static_cast<int>(ngram_max) != settings.tokens.ngram_max || subword != settings.subword ||
      sublinear != settings.tfidf.sublinear_tf) {
    throw ModelFormatError(path, "tokenisation settings differ from the manifest's config");
  }
  const std::uint64_t n = r.count(8);
  std::vector<std::string> vocabulary;
  vocabulary.reserve(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    vocabulary.push_back(r.str());
    if (i > 0 && !(vocabulary[i - 1] < vocabulary[i])) throw ModelFormatError(path, "vocabulary is not sorted and unique");
  }
  std::vector<float> idf = r.f32_array();
  r.expect_end();
  if (idf.size() != vocabulary.size()) throw ModelFormatError(path, "idf and vocabulary sizes differ");
  // Smoothed idf is ln((1 + n) / (1 + df)) + 1 >= 1: anything else is a corrupt file, not a model.
  for (float v : idf) {
    if (!(v >= 1.0f) || !std::isfinite(v)) throw ModelFormatError(path, "idf values must be finite and at least 1");
  }
  return TfidfVectorizer::from_parts(std::move(vocabulary), std::move(idf), sublinear, settings.tfidf.l2_normalize);
}

}  // namespace newscls::tfidf_rf
