#include "fasttext/fit.h"

#include <algorithm>
#include <atomic>

#include <spdlog/spdlog.h>

#include "fasttext/trainer.h"
#include "newscls/core/parallel.h"
#include "newscls/core/stopwatch.h"

namespace newscls::fasttext {
namespace {

Examples make_examples(const FeatureExtractor& fx, const std::vector<std::string>& titles,
                       const std::vector<int>& labels) {
  Examples ex;
  ex.ids.reserve(titles.size() * 64);
  ex.offsets.reserve(titles.size() + 1);
  ex.labels.reserve(titles.size());
  std::vector<std::int32_t> ids;
  for (std::size_t i = 0; i < titles.size(); ++i) {
    ids.clear();
    fx.extract(titles[i], ids);
    ex.add(ids, labels[i]);
  }
  return ex;
}

// The titles the tables and IDF count: the training titles, then the feed's.
std::vector<std::string> counted_titles(const std::vector<std::string>& titles, const FitOptions& options) {
  std::vector<std::string> all = titles;
  if (options.unlabeled != nullptr) all.insert(all.end(), options.unlabeled->begin(), options.unlabeled->end());
  return all;
}

std::vector<float> idf_of(const FeatureExtractor& fx, const Examples& examples, std::int64_t rows,
                          const FitOptions& options) {
  if (options.unlabeled == nullptr || options.unlabeled->empty()) return idf_weights(examples, rows);
  Examples all = examples;
  std::vector<std::int32_t> ids;
  for (const std::string& title : *options.unlabeled) {
    ids.clear();
    fx.extract(title, ids);
    all.add(ids, 0);  // the label is not read: IDF counts rows only
  }
  return idf_weights(all, rows);
}

}  // namespace

FitResult fit_engine(const Settings& settings, const std::vector<std::string>& normalized_titles,
                     const std::vector<int>& labels, int num_labels, const FitOptions& options) {
  FeatureOptions fo;
  fo.min_count = settings.min_count;
  fo.ngram_max = settings.ngram_max;
  fo.buckets = settings.buckets;
  fo.ngram_min_count = settings.ngram_min_count;
  fo.skip_bigrams = settings.skip_bigrams;
  FeatureExtractor features(fo);
  features.build(options.unlabeled != nullptr ? counted_titles(normalized_titles, options) : normalized_titles);
  return fit_with_features(std::move(features), settings, normalized_titles, labels, num_labels, options);
}

FitResult fit_with_features(FeatureExtractor features, const Settings& settings,
                            const std::vector<std::string>& normalized_titles, const std::vector<int>& labels,
                            int num_labels, const FitOptions& options) {
  const Stopwatch watch;
  FitResult result;
  Engine& engine = result.engine;
  engine.features = std::move(features);
  const Examples examples = make_examples(engine.features, normalized_titles, labels);
  const std::int64_t rows = engine.features.rows();
  std::vector<float> weights;
  if (settings.idf) weights = idf_of(engine.features, examples, rows, options);
  const double prepare_seconds = watch.seconds();
  spdlog::info("fasttext: {} titles, {} characters + {} n-gram buckets = {} rows x {} dims ({:.0f} MB)",
               examples.size(), engine.features.vocab_size(), engine.features.kept_buckets().size(), rows, settings.dim,
               static_cast<double>(rows) * settings.dim * 4 / 1e6 * settings.ensemble);

  TrainOptions to;
  to.epochs = settings.epochs;
  to.lr = static_cast<float>(settings.lr);
  to.threads = options.threads;
  to.dropout = static_cast<float>(settings.dropout);
  to.show_progress = options.show_progress;
  engine.loss = settings.loss;
  engine.pooling = settings.pooling;
  engine.num_labels = num_labels;
  std::vector<float> folded(static_cast<std::size_t>(rows) * static_cast<std::size_t>(num_labels), 0.0f);
  // Networks are trained one at a time and folded at once, so memory holds one network.
  double loss = 0;
  const float share = 1.0f / static_cast<float>(settings.ensemble);
  for (int k = 0; k < settings.ensemble; ++k) {
    Model model(rows, settings.dim, num_labels, settings.loss);
    to.seed = options.seed + 7919ull * static_cast<std::uint64_t>(k);
    model.init(to.seed);
    model.set_row_weights(weights, settings.pooling);
    model.set_label_smoothing(static_cast<float>(settings.label_smoothing));
    const TrainStats stats = train_model(model, examples, to);
    loss += stats.last_epoch_loss / settings.ensemble;
    const std::vector<float> table = fold_table(model);
    for (std::size_t i = 0; i < table.size(); ++i) folded[i] += share * table[i];
  }
  engine.table = std::move(folded);
  engine.row_weights = std::move(weights);
  result.facts = {
      {"vocab_size", engine.features.vocab_size()},
      {"ngram_rows", engine.features.kept_buckets().size()},
      {"rows", rows},
      {"last_epoch_loss", loss},
      {"prepare_seconds", prepare_seconds},
      {"fit_seconds", watch.seconds()},
  };
  return result;
}

double engine_accuracy(const Engine& engine, const std::vector<std::string>& normalized_titles,
                       const std::vector<int>& labels, int threads) {
  if (normalized_titles.empty()) return 0.0;
  std::atomic<std::size_t> total_correct{0};
  parallel_for(
      normalized_titles.size(), threads,
      [&](std::size_t begin, std::size_t end, int) {
        Predictor predictor(engine);
        std::size_t ok = 0;
        for (std::size_t i = begin; i < end; ++i) {
          const std::vector<float>& p = predictor.probs(normalized_titles[i]);
          ok += static_cast<int>(std::max_element(p.begin(), p.end()) - p.begin()) == labels[i];
        }
        total_correct += ok;
      },
      /*min_per_worker=*/64);
  return static_cast<double>(total_correct.load()) / static_cast<double>(normalized_titles.size());
}

}  // namespace newscls::fasttext
