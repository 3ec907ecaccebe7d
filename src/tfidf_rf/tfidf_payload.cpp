// tfidf.bin: writing version 2 (blocks, laid out in payloads.h), reading versions 1 and 2.
#include <limits>
#include <string_view>
#include <utility>

#include "newscls/core/binary_io.h"
#include "newscls/core/error.h"
#include "tfidf_rf/payloads.h"

namespace newscls::tfidf_rf {
namespace {

constexpr char kMagic[4] = {'N', 'C', 'T', 'V'};
constexpr std::uint32_t kVersion = 2;

// The tokenisation recorded in the file must agree with the manifest's settings.
bool read_sublinear(PayloadReader& r, const Settings& settings) {
  const std::uint32_t ngram_min = r.u32(), ngram_max = r.u32();
  const bool subword = r.u8() != 0;
  const bool sublinear = r.u8() != 0;
  if (static_cast<int>(ngram_min) != settings.tokens.ngram_min ||
      static_cast<int>(ngram_max) != settings.tokens.ngram_max || subword != settings.subword ||
      sublinear != settings.tfidf.sublinear_tf) {
    throw ModelFormatError(r.path(), "tokenisation settings differ from the manifest's config");
  }
  return sublinear;
}

// Smoothed idf is ln((1 + n) / (1 + df)) + 1 >= 1: anything else is a corrupt file, not a model.
// One branch-free pass the compiler vectorises.
void check_idf(const PayloadReader& r, const PayloadArray<float>& idf) {
  constexpr float kMax = std::numeric_limits<float>::max();
  unsigned bad = 0;
  for (float v : idf) bad |= static_cast<unsigned>(!(v >= 1.0f)) | static_cast<unsigned>(!(v <= kMax));
  if (bad != 0) throw ModelFormatError(r.path(), "idf values must be finite and at least 1");
}

Vocabulary read_vocabulary_v1(PayloadReader& r) {
  const std::uint64_t n = r.count(8);
  std::vector<std::string> terms;
  terms.reserve(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    terms.push_back(r.str());
    if (i > 0 && !(terms[i - 1] < terms[i])) throw ModelFormatError(r.path(), "vocabulary is not sorted and unique");
  }
  return Vocabulary(terms);
}

// The offsets must delimit the bytes, and the terms be sorted and unique, before the index
// is built over them.
Vocabulary read_vocabulary_v2(PayloadReader& r, std::uint64_t n, std::uint64_t n_bytes) {
  PayloadArray<std::uint32_t> offsets = r.block<std::uint32_t>(n + 1);
  PayloadArray<char> bytes = r.block<char>(n_bytes);
  if (!offsets_delimit(offsets, n_bytes)) {
    throw ModelFormatError(r.path(), "term offsets do not delimit the term bytes");
  }
  std::string_view previous;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::string_view term(bytes.data() + offsets[i], offsets[i + 1] - offsets[i]);
    if (i > 0 && !(previous < term)) throw ModelFormatError(r.path(), "vocabulary is not sorted and unique");
    previous = term;
  }
  return Vocabulary(std::move(offsets), std::move(bytes));
}

}  // namespace

void save_tfidf(const std::string& path, const Settings& settings, const TfidfVectorizer& vectorizer) {
  const Vocabulary& vocabulary = vectorizer.vocabulary();
  PayloadWriter w(path, kMagic, kVersion);
  w.u32(static_cast<std::uint32_t>(settings.tokens.ngram_min));
  w.u32(static_cast<std::uint32_t>(settings.tokens.ngram_max));
  w.u8(settings.subword ? 1 : 0);
  w.u8(vectorizer.sublinear_tf() ? 1 : 0);
  w.u64(vocabulary.size());
  w.u64(vocabulary.bytes().size());
  w.block(vocabulary.offsets());
  w.block(vocabulary.bytes());
  w.block(vectorizer.idf());
  w.finish();
}

TfidfVectorizer load_tfidf(const std::string& path, const Settings& settings) {
  PayloadReader r(path, kMagic, kVersion);
  const bool sublinear = read_sublinear(r, settings);
  Vocabulary vocabulary;
  PayloadArray<float> idf;
  if (r.version() <= 1) {
    vocabulary = read_vocabulary_v1(r);
    idf = r.f32_array();
  } else {
    const std::uint64_t n = r.u64(), n_bytes = r.u64();
    if (n > 0x7fffffffULL) throw ModelFormatError(path, "vocabulary size");
    vocabulary = read_vocabulary_v2(r, n, n_bytes);
    idf = r.block<float>(n);
  }
  r.expect_end();
  if (idf.size() != vocabulary.size()) throw ModelFormatError(path, "idf and vocabulary sizes differ");
  check_idf(r, idf);
  return TfidfVectorizer::from_parts(std::move(vocabulary), std::move(idf), sublinear, settings.tfidf.l2_normalize);
}

}  // namespace newscls::tfidf_rf
