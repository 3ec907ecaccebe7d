// The tfidf-rf Classifier: title -> character n-grams (+ optional SentencePiece pieces)
// -> sparse TF-IDF -> random forest. Payloads: tfidf.bin (vocabulary and idf),
// forest.bin (the trees) and, with subword features, subword.bin (the SentencePiece model).
#include "tfidf_rf/tfidf_rf.h"

#include <algorithm>
#include <mutex>
#include <optional>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "newscls/core/config.h"
#include "newscls/core/error.h"
#include "newscls/core/parallel.h"
#include "newscls/core/progress.h"
#include "newscls/core/stopwatch.h"
#include "newscls/text/normalize.h"
#include "newscls/text/tokenizer.h"
#include "tfidf_rf/features.h"
#include "tfidf_rf/forest.h"
#include "tfidf_rf/payloads.h"
#include "tfidf_rf/settings.h"
#include "tfidf_rf/tfidf.h"

namespace newscls::tfidf_rf {
namespace {

constexpr const char* kTfidfPayload = "tfidf.bin";
constexpr const char* kForestPayload = "forest.bin";
constexpr const char* kSubwordPayload = "subword.bin";
constexpr std::size_t kChunk = 8192;
constexpr std::size_t kMinPerThread = 64;  // fewer titles are not worth a thread

class TfidfRfClassifier : public Classifier {
 public:
  TfidfRfClassifier() { configure(default_config()); }

  std::string family() const override { return "tfidf-rf"; }

  void configure(const nlohmann::json& config) override {
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
  TitleTokenizer tokenizer() const { return TitleTokenizer(settings_.tokens, subword_ ? &*subword_ : nullptr); }
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
    parallel_for(
        n, threads_,
        [&](std::size_t a, std::size_t b, int) {
          for (std::size_t i = a; i < b; ++i) tok.tokens(titles[start + i], chunk[i]);
        },
        kMinPerThread);
    for (const auto& doc : chunk) vectorizer.count(doc);
  }
  vectorizer.finish_fit();
  vectorizer_ = std::move(vectorizer);
}

CsrMatrix TfidfRfClassifier::vectorize(const std::vector<std::string>& titles) const {
  std::vector<SparseRow> rows(titles.size());
  const TitleTokenizer tok = tokenizer();
  parallel_for(
      titles.size(), threads_,
      [&](std::size_t a, std::size_t b, int) {
        std::vector<std::string> tokens;
        std::vector<std::int32_t> ids;
        for (std::size_t i = a; i < b; ++i) {
          tok.tokens(titles[i], tokens);
          vectorizer_->transform(tokens, rows[i], ids);
          rows[i].shrink_to_fit();
        }
      },
      kMinPerThread);
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
  for (const std::string& t : titles) normalized.push_back(normalize_title(t, settings_.tokens.fold_punctuation));
  SubwordOptions so;
  so.vocab_size = settings_.subword_vocab_size;
  so.vocab_size_key = "subword_vocab_size";
  subword_ = SubwordTokenizer::train(normalized, so);
}

ForestOptions TfidfRfClassifier::forest_options(std::size_t n_features, std::uint64_t seed) const {
  ForestOptions fo = settings_.forest;
  fo.features_per_split = resolve_features_per_split(settings_.features_per_split, n_features);
  fo.seed = seed;
  fo.threads = threads_;
  return fo;
}

void TfidfRfClassifier::fit_forest(const CsrMatrix& x, const Dataset& data, int num_classes, const ForestOptions& fo) {
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
  const Stopwatch watch;
  // A reader's feed counts for the vocabulary and document frequencies, never for the forest.
  std::vector<std::string> counted = data.titles;
  if (ctx.unlabeled != nullptr) counted.insert(counted.end(), ctx.unlabeled->begin(), ctx.unlabeled->end());
  fit_subword(counted);
  const double subword_seconds = settings_.subword ? watch.seconds() : 0.0;
  fit_vocabulary(counted);
  const CsrMatrix x = vectorize(data.titles);
  if (x.cols == 0) {  // a forest of no features answers one class for every title
    throw ConfigError("min_df", "no n-gram occurs in " + std::to_string(settings_.tfidf.min_df) +
                                    " training titles or more: no features to learn from; lower min_df");
  }
  const double vectorise_seconds = watch.seconds();
  const double nnz_per_title = static_cast<double>(x.nnz()) / static_cast<double>(x.rows());
  spdlog::info("tfidf-rf: {} titles, {} features, {:.1f} non-zeros per title, vectorised in {:.2f} s", x.rows(), x.cols,
               nnz_per_title, vectorise_seconds);

  const ForestOptions fo = forest_options(x.cols, ctx.seed);
  const Stopwatch fit_watch;
  fit_forest(x, data, ctx.labels->size(), fo);
  const double fit_seconds = fit_watch.seconds();
  const double train_seconds = watch.seconds();
  spdlog::info("tfidf-rf: {} trees fitted in {:.2f} s ({} features per split)", fo.n_trees, fit_seconds,
               fo.features_per_split);
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
  parallel_for(
      titles.size(), threads_,
      [&](std::size_t a, std::size_t b, int) {
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
      },
      kMinPerThread);
  return out;
}

void TfidfRfClassifier::save(BundleWriter& bundle) const {
  if (!forest_ || !vectorizer_) throw UsageError("tfidf-rf: save before train");
  save_tfidf(bundle.payload_path(kTfidfPayload), settings_, *vectorizer_);
  save_forest(bundle.payload_path(kForestPayload), *forest_);
  if (subword_) save_subword(bundle.payload_path(kSubwordPayload), *subword_);
}

void TfidfRfClassifier::load(const Bundle& bundle) {
  TfidfVectorizer vectorizer = load_tfidf(bundle.payload_path(kTfidfPayload), settings_);
  const std::string forest_path = bundle.payload_path(kForestPayload);
  RandomForest forest = load_forest(forest_path);
  if (forest.num_features() != vectorizer.num_features() ||
      static_cast<std::size_t>(forest.num_classes()) != bundle.manifest().labels.size()) {
    throw ModelFormatError(forest_path, "forest does not match the vocabulary or the labels");
  }
  std::optional<SubwordTokenizer> sp;
  if (settings_.subword) sp = load_subword(bundle.payload_path(kSubwordPayload));
  vectorizer_ = std::move(vectorizer);
  forest_ = std::move(forest);
  subword_ = std::move(sp);
}

}  // namespace

std::unique_ptr<Classifier> make_classifier() { return std::make_unique<TfidfRfClassifier>(); }

}  // namespace newscls::tfidf_rf
