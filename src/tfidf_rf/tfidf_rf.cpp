// The tfidf-rf Classifier: title -> character n-grams (+ optional SentencePiece pieces)
// -> sparse TF-IDF -> random forest. Payloads: tfidf.bin (vocabulary and idf),
// forest.bin (the trees) and, with subword features, subword.bin (the SentencePiece model).
#include "tfidf_rf/tfidf_rf.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "newscls/binary_io.h"
#include "newscls/config.h"
#include "newscls/error.h"
#include "newscls/parallel.h"
#include "newscls/progress.h"
#include "newscls/text.h"
#include "newscls/tokenizer.h"
#include "tfidf_rf/features.h"
#include "tfidf_rf/forest.h"
#include "tfidf_rf/tfidf.h"

namespace newscls::tfidf_rf {
namespace {

constexpr char kTfidfMagic[4] = {'N', 'C', 'T', 'V'};
constexpr char kForestMagic[4] = {'N', 'C', 'R', 'F'};
constexpr char kSubwordMagic[4] = {'N', 'C', 'S', 'P'};
constexpr std::uint32_t kPayloadVersion = 1;  // tfidf.bin and subword.bin; forest.bin has its own
constexpr std::size_t kChunk = 8192;
constexpr std::size_t kMinPerThread = 64;  // fewer titles are not worth a thread

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Settings {
  TokenOptions tokens;
  bool subword = false;
  int subword_vocab_size = 8000;
  TfidfOptions tfidf;
  ForestOptions forest;
  std::string features_per_split;
};

// "sqrt", "log2", "sqrt*K", "log2*K", a count >= 1, or a fraction of the features < 1.
int resolve_features_per_split(const std::string& spec, std::size_t n_features) {
  const double n = static_cast<double>(std::max<std::size_t>(n_features, 1));
  auto fail = [&spec]() {
    return ConfigError("max_features_per_split",
                       "'" + spec + "' is not sqrt, log2, sqrt*K, log2*K, a count >= 1 or a fraction < 1");
  };
  double base = 0, factor = 1;
  std::string number = spec;
  if (spec.rfind("sqrt", 0) == 0 || spec.rfind("log2", 0) == 0) {
    base = spec[0] == 's' ? std::sqrt(n) : std::log2(n);
    if (spec.size() == 4) {
      number.clear();
    } else if (spec[4] == '*') {
      number = spec.substr(5);
    } else {
      throw fail();
    }
  }
  if (!number.empty()) {
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(number, &used);
    } catch (const std::exception&) {
      throw fail();
    }
    if (used != number.size() || !(v > 0) || !std::isfinite(v)) throw fail();
    if (base > 0) {
      factor = v;
    } else {
      base = v < 1 ? v * n : v;
    }
  }
  return static_cast<int>(std::clamp(std::round(base * factor), 1.0, n));
}

Settings parse_settings(const nlohmann::json& c) {
  Settings s;
  s.tokens.ngram_min = static_cast<int>(config_int(c, "ngram_min", 1, 8));
  s.tokens.ngram_max = static_cast<int>(config_int(c, "ngram_max", 1, 8));
  if (s.tokens.ngram_max < s.tokens.ngram_min) throw ConfigError("ngram_max", "must be >= ngram_min");
  s.subword = config_bool(c, "subword");
  s.subword_vocab_size = static_cast<int>(config_int(c, "subword_vocab_size", 100, 1000000));
  s.tfidf.min_df = static_cast<int>(config_int(c, "min_df", 1, 1000000000));
  s.tfidf.max_features = static_cast<int>(config_int(c, "max_features", 0, 100000000));
  s.tfidf.sublinear_tf = config_bool(c, "sublinear_tf");
  s.forest.n_trees = static_cast<int>(config_int(c, "n_trees", 1, 100000));
  s.forest.max_depth = static_cast<int>(config_int(c, "max_depth", 0, 100000));
  s.forest.min_samples_leaf = static_cast<int>(config_int(c, "min_samples_leaf", 1, 1000000000));
  s.forest.bootstrap = config_bool(c, "bootstrap");
  s.features_per_split = config_string(c, "max_features_per_split");
  resolve_features_per_split(s.features_per_split, 1000);  // validates the spelling now
  return s;
}


class TfidfRfClassifier : public Classifier {
 public:
  TfidfRfClassifier() { configure(default_config()); }

  std::string family() const override { return "tfidf-rf"; }

  void configure(const nlohmann::json& config) override {
    check_config_keys(config, default_config(), "tfidf-rf");
    nlohmann::json c = strip_docs(config);
    settings_ = parse_settings(c);
    config_ = c;
  }

  nlohmann::json config() const override { return config_; }

  nlohmann::json train(const TrainContext& ctx) override;
  std::vector<Prediction> predict_batch(const std::vector<std::string>& titles) override;
  // Large enough that each tree's nodes are reused by many titles while in cache.
  std::size_t preferred_batch_size() const override { return 4096; }
  void set_threads(int threads) override { threads_ = std::max(threads, 1); }
  void save(BundleWriter& bundle) const override;
  void load(const Bundle& bundle) override;

 private:
  TitleTokenizer tokenizer() const {
    return TitleTokenizer(settings_.tokens, subword_ ? &*subword_ : nullptr);
  }
  CsrMatrix vectorize(const std::vector<std::string>& titles) const;
  // The steps of train: SentencePiece pieces (when enabled), the vocabulary, the forest.
  void fit_subword(const std::vector<std::string>& titles);
  void fit_vocabulary(const std::vector<std::string>& titles);
  ForestOptions forest_options(std::size_t n_features, std::uint64_t seed) const;
  void fit_forest(const CsrMatrix& x, const Dataset& data, int num_classes, const ForestOptions& fo);

  Settings settings_;
  nlohmann::json config_;
  int threads_ = 1;
  std::optional<SubwordTokenizer> subword_;
  std::optional<TfidfVectorizer> vectorizer_;
  std::optional<RandomForest> forest_;
};

void TfidfRfClassifier::fit_vocabulary(const std::vector<std::string>& titles) {
  TfidfVectorizer vectorizer(settings_.tfidf);
  const TitleTokenizer tok = tokenizer();
  std::vector<std::vector<std::string>> chunk;
  for (std::size_t start = 0; start < titles.size(); start += kChunk) {
    const std::size_t n = std::min(kChunk, titles.size() - start);
    chunk.resize(n);
    parallel_for(n, threads_, [&](std::size_t a, std::size_t b, int) {
      for (std::size_t i = a; i < b; ++i) tok.tokens(titles[start + i], chunk[i]);
    }, kMinPerThread);
    for (const auto& doc : chunk) vectorizer.count(doc);
  }
  vectorizer.finish_fit();
  vectorizer_ = std::move(vectorizer);
}

CsrMatrix TfidfRfClassifier::vectorize(const std::vector<std::string>& titles) const {
  std::vector<SparseRow> rows(titles.size());
  const TitleTokenizer tok = tokenizer();
  parallel_for(titles.size(), threads_, [&](std::size_t a, std::size_t b, int) {
    std::vector<std::string> tokens;
    std::vector<std::int32_t> ids;
    for (std::size_t i = a; i < b; ++i) {
      tok.tokens(titles[i], tokens);
      vectorizer_->transform(tokens, rows[i], ids);
      rows[i].shrink_to_fit();
    }
  }, kMinPerThread);
  CsrMatrix x;
  x.cols = vectorizer_->num_features();
  std::size_t nnz = 0;
  for (const SparseRow& r : rows) nnz += r.size();
  x.indices.reserve(nnz);
  x.values.reserve(nnz);
  x.row_ptr.reserve(rows.size() + 1);
  for (SparseRow& r : rows) {
    x.append_row(r);
    r = {};
  }
  return x;
}

void TfidfRfClassifier::fit_subword(const std::vector<std::string>& titles) {
  subword_.reset();
  if (!settings_.subword) return;
  std::vector<std::string> normalized;
  normalized.reserve(titles.size());
  for (const std::string& t : titles) normalized.push_back(normalize_title(t));
  SubwordOptions so;
  so.vocab_size = settings_.subword_vocab_size;
  subword_ = SubwordTokenizer::train(normalized, so);
}

ForestOptions TfidfRfClassifier::forest_options(std::size_t n_features, std::uint64_t seed) const {
  ForestOptions fo = settings_.forest;
  fo.features_per_split = resolve_features_per_split(settings_.features_per_split, n_features);
  fo.seed = seed;
  fo.threads = threads_;
  return fo;
}

void TfidfRfClassifier::fit_forest(const CsrMatrix& x, const Dataset& data, int num_classes,
                                   const ForestOptions& fo) {
  Progress bar("forest", static_cast<std::size_t>(fo.n_trees));
  std::mutex bar_mutex;
  try {
    forest_ = RandomForest::fit(x, data.labels, num_classes, fo, [&]() {
      std::lock_guard<std::mutex> lock(bar_mutex);
      bar.advance(1);
    });
  } catch (const std::invalid_argument& e) {
    throw DataError(data.path, 0, e.what());
  }
  bar.finish();
}

nlohmann::json TfidfRfClassifier::train(const TrainContext& ctx) {
  if (ctx.train == nullptr || ctx.labels == nullptr || ctx.train->size() == 0) {
    throw DataError(ctx.train ? ctx.train->path : "", 0, "no training titles");
  }
  threads_ = std::max(ctx.threads, 1);
  const Dataset& data = *ctx.train;
  const auto start = Clock::now();
  fit_subword(data.titles);
  const double subword_seconds = settings_.subword ? seconds_since(start) : 0.0;
  fit_vocabulary(data.titles);
  const CsrMatrix x = vectorize(data.titles);
  const double vectorise_seconds = seconds_since(start);
  const double nnz_per_title = static_cast<double>(x.nnz()) / static_cast<double>(x.rows());
  spdlog::info("tfidf-rf: {} titles, {} features, {:.1f} non-zeros per title, vectorised in {:.2f} s",
               x.rows(), x.cols, nnz_per_title, vectorise_seconds);

  const ForestOptions fo = forest_options(x.cols, ctx.seed);
  const auto fit_start = Clock::now();
  fit_forest(x, data, ctx.labels->size(), fo);
  const double fit_seconds = seconds_since(fit_start);
  const double train_seconds = seconds_since(start);
  spdlog::info("tfidf-rf: {} trees fitted in {:.2f} s ({} features per split)", fo.n_trees,
               fit_seconds, fo.features_per_split);
  return {{"vectorise_seconds", vectorise_seconds},
          {"subword_seconds", subword_seconds},
          {"fit_seconds", fit_seconds},
          {"train_seconds", train_seconds},
          {"train_titles_per_second", static_cast<double>(data.size()) / std::max(train_seconds, 1e-9)},
          {"n_train", data.size()},
          {"n_features", x.cols},
          {"nnz_per_title", nnz_per_title},
          {"features_per_split", fo.features_per_split},
          {"threads", threads_},
          {"forest", forest_->stats()}};
}

std::vector<Prediction> TfidfRfClassifier::predict_batch(const std::vector<std::string>& titles) {
  if (!forest_ || !vectorizer_) throw UsageError("tfidf-rf: predict before train or load");
  std::vector<Prediction> out(titles.size());
  const int k = forest_->num_classes();
  const TitleTokenizer tok = tokenizer();
  parallel_for(titles.size(), threads_, [&](std::size_t a, std::size_t b, int) {
    std::vector<std::string> tokens;
    std::vector<std::int32_t> ids;
    std::vector<SparseRow> rows(b - a);
    for (std::size_t i = a; i < b; ++i) {
      tok.tokens(titles[i], tokens);
      vectorizer_->transform(tokens, rows[i - a], ids);
    }
    std::vector<float> probs((b - a) * static_cast<std::size_t>(k));
    forest_->predict_proba_batch(rows.data(), rows.size(), probs.data());
    for (std::size_t i = a; i < b; ++i) {
      const float* row_probs = probs.data() + (i - a) * static_cast<std::size_t>(k);
      out[i] = prediction_from_probs(std::vector<float>(row_probs, row_probs + k));
    }
  }, kMinPerThread);
  return out;
}

void TfidfRfClassifier::save(BundleWriter& bundle) const {
  if (!forest_ || !vectorizer_) throw UsageError("tfidf-rf: save before train");
  {
    PayloadWriter w(bundle.payload_path("tfidf.bin"), kTfidfMagic, kPayloadVersion);
    w.u32(static_cast<std::uint32_t>(settings_.tokens.ngram_min));
    w.u32(static_cast<std::uint32_t>(settings_.tokens.ngram_max));
    w.u8(settings_.subword ? 1 : 0);
    w.u8(vectorizer_->sublinear_tf() ? 1 : 0);
    w.u64(vectorizer_->num_features());
    for (const std::string& term : vectorizer_->vocabulary()) w.str(term);
    w.f32_array(vectorizer_->idf());
    w.finish();
  }
  {
    PayloadWriter w(bundle.payload_path("forest.bin"), kForestMagic, RandomForest::kPayloadVersion);
    forest_->save(w);
    w.finish();
  }
  if (subword_) {
    PayloadWriter w(bundle.payload_path("subword.bin"), kSubwordMagic, kPayloadVersion);
    w.str(subword_->serialized());
    w.finish();
  }
}

void TfidfRfClassifier::load(const Bundle& bundle) {
  const std::string tfidf_path = bundle.payload_path("tfidf.bin");
  PayloadReader r(tfidf_path, kTfidfMagic, kPayloadVersion);
  const std::uint32_t ngram_min = r.u32(), ngram_max = r.u32();
  const bool subword = r.u8() != 0;
  const bool sublinear = r.u8() != 0;
  if (static_cast<int>(ngram_min) != settings_.tokens.ngram_min ||
      static_cast<int>(ngram_max) != settings_.tokens.ngram_max || subword != settings_.subword ||
      sublinear != settings_.tfidf.sublinear_tf) {
    throw ModelFormatError(tfidf_path, "tokenisation settings differ from the manifest's config");
  }
  const std::uint64_t n = r.count(8);
  std::vector<std::string> vocabulary;
  vocabulary.reserve(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    vocabulary.push_back(r.str());
    if (i > 0 && !(vocabulary[i - 1] < vocabulary[i])) {
      throw ModelFormatError(tfidf_path, "vocabulary is not sorted and unique");
    }
  }
  std::vector<float> idf = r.f32_array();
  r.expect_end();
  if (idf.size() != vocabulary.size()) throw ModelFormatError(tfidf_path, "idf and vocabulary sizes differ");

  const std::string forest_path = bundle.payload_path("forest.bin");
  PayloadReader fr(forest_path, kForestMagic, RandomForest::kPayloadVersion);
  RandomForest forest = RandomForest::load(fr);
  fr.expect_end();
  if (forest.num_features() != vocabulary.size() || forest.num_trees() == 0 ||
      static_cast<std::size_t>(forest.num_classes()) != bundle.manifest().labels.size()) {
    throw ModelFormatError(forest_path, "forest does not match the vocabulary, labels or has no trees");
  }

  std::optional<SubwordTokenizer> sp;
  if (subword) {
    const std::string sp_path = bundle.payload_path("subword.bin");
    PayloadReader sr(sp_path, kSubwordMagic, kPayloadVersion);
    std::string bytes = sr.str();
    sr.expect_end();
    sp = SubwordTokenizer::from_serialized(bytes, sp_path);
  }
  vectorizer_ = TfidfVectorizer::from_parts(std::move(vocabulary), std::move(idf), sublinear);
  forest_ = std::move(forest);
  subword_ = std::move(sp);
}

}  // namespace

std::unique_ptr<Classifier> make_classifier() { return std::make_unique<TfidfRfClassifier>(); }

nlohmann::json default_config() {
  return {{"ngram_min", 1},
          {"ngram_max", 2},
          {"subword", false},
          {"subword_vocab_size", 8000},
          {"min_df", 2},
          {"max_features", 50000},
          {"sublinear_tf", true},
          {"n_trees", 100},
          {"max_depth", 0},
          {"min_samples_leaf", 3},
          {"max_features_per_split", "sqrt"},
          {"bootstrap", true}};
}

}  // namespace newscls::tfidf_rf
