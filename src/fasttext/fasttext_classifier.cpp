// The fasttext family behind the Classifier interface: config, training (optionally with
// autotune and quantisation), batched multi-threaded prediction, bundle payloads.
#include <algorithm>
#include <optional>

#include <spdlog/spdlog.h>

#include "fasttext/autotune.h"
#include "fasttext/engine.h"
#include "fasttext/fasttext.h"
#include "fasttext/fit.h"
#include "fasttext/quantize.h"
#include "fasttext/settings.h"
#include "newscls/core/error.h"
#include "newscls/core/parallel.h"
#include "newscls/core/stopwatch.h"
#include "newscls/text/normalize.h"

namespace newscls::fasttext {
namespace {

constexpr const char* kPayload = "fasttext.bin";
// Below this many titles per thread, starting threads costs more than it saves.
constexpr std::size_t kMinTitlesPerThread = 256;

std::vector<std::string> normalize_all(const std::vector<std::string>& titles, bool fold_punctuation) {
  std::vector<std::string> out;
  out.reserve(titles.size());
  for (const std::string& t : titles) out.push_back(normalize_title(t, fold_punctuation));
  return out;
}

// The payload carries its own feature and loss settings and prediction follows them; a
// manifest that says otherwise (edited by hand, or pasted from another bundle) would make
// `info` and the report describe a model that is not the one answering.
void check_payload_matches(const Engine& e, const Settings& s, const std::string& path) {
  const FeatureOptions& fo = e.features.options();
  const auto differ = [&](const char* key, const std::string& payload, const std::string& manifest) {
    if (payload == manifest) return;
    throw ModelFormatError(path, std::string("holds ") + key + " " + payload + " but the manifest's config says " +
                                     manifest + "; the bundle was altered after training");
  };
  const auto str = [](auto v) { return std::to_string(v); };
  const auto flag = [](bool v) { return std::string(v ? "true" : "false"); };
  differ("loss", loss_name(e.loss), loss_name(s.loss));
  differ("pooling", pooling_name(e.pooling), pooling_name(s.pooling));
  differ("ngram_max", str(fo.ngram_max), str(s.ngram_max));
  differ("buckets", str(fo.buckets), str(s.buckets));
  differ("min_count", str(fo.min_count), str(s.min_count));
  differ("ngram_min_count", str(fo.ngram_min_count), str(s.ngram_min_count));
  differ("skip_bigrams", flag(fo.skip_bigrams), flag(s.skip_bigrams));
  differ("idf", flag(!e.row_weights.empty()), flag(s.idf));
  differ("quantize", flag(e.quantized), flag(s.quantize));
}

class FastTextClassifier : public Classifier {
 public:
  std::string family() const override { return "fasttext"; }

  void configure(const nlohmann::json& config) override { settings_ = parse_settings(config); }
  nlohmann::json config() const override { return to_json(settings_); }

  nlohmann::json train(const TrainContext& ctx) override;
  std::vector<Prediction> predict_batch(const std::vector<std::string>& titles) override;
  std::size_t preferred_batch_size() const override { return 8192; }
  void set_threads(int threads) override { threads_ = run_threads(settings_, threads); }

  void save(BundleWriter& bundle) const override {
    if (!engine_) throw UsageError("fasttext: nothing to save, the model is not trained");
    save_engine(*engine_, bundle.payload_path(kPayload));
  }
  void load(const Bundle& bundle) override {
    const std::string path = bundle.payload_path(kPayload);
    Engine engine = load_engine(path, static_cast<int>(bundle.manifest().labels.size()));
    check_payload_matches(engine, settings_, path);
    engine_ = std::move(engine);
  }

 private:
  // Training gets set_threads(ctx.threads) first (the workflow), which warns of a config key
  // that disagrees; a caller that trains without it gets ctx.threads alone, as documented.
  static int train_threads(const TrainContext& ctx) { return std::max(1, ctx.threads); }

  Settings settings_ = parse_settings(settings_defaults());
  int threads_ = 1;
  std::optional<Engine> engine_;
};

nlohmann::json FastTextClassifier::train(const TrainContext& ctx) {
  if (!ctx.train || !ctx.labels) throw UsageError("fasttext: training needs a train set and labels");
  const Stopwatch watch;
  const int threads = train_threads(ctx);
  const std::vector<std::string> titles = normalize_all(ctx.train->titles, settings_.fold_punctuation);
  nlohmann::json facts = nlohmann::json::object();
  if (settings_.autotune) {
    if (!ctx.dev || ctx.dev->size() == 0) throw UsageError("fasttext: autotune needs a dev set");
    AutotuneResult tuned =
        autotune(settings_, titles, ctx.train->labels, normalize_all(ctx.dev->titles, settings_.fold_punctuation),
                 ctx.dev->labels, ctx.labels->size(), {ctx.seed, threads});
    settings_ = tuned.settings;
    facts["autotune"] = tuned.report;
    facts["chosen"] = to_json(settings_);
  }
  FitOptions fit_options{ctx.seed, threads, true};
  std::vector<std::string> feed;
  if (ctx.unlabeled != nullptr) {
    feed = normalize_all(*ctx.unlabeled, settings_.fold_punctuation);
    fit_options.unlabeled = &feed;
  }
  FitResult fit = fit_engine(settings_, titles, ctx.train->labels, ctx.labels->size(), fit_options);
  facts["fit"] = fit.facts;
  if (settings_.quantize) facts["quantize"] = quantize_engine(fit.engine, settings_);
  engine_ = std::move(fit.engine);
  if (ctx.dev && ctx.dev->size() > 0) {
    facts["dev_accuracy"] =
        engine_accuracy(*engine_, normalize_all(ctx.dev->titles, settings_.fold_punctuation), ctx.dev->labels, threads);
  }
  const double seconds = watch.seconds();
  facts["train_titles_per_second"] =
      static_cast<double>(titles.size()) * settings_.epochs * settings_.ensemble / seconds;
  return facts;
}

std::vector<Prediction> FastTextClassifier::predict_batch(const std::vector<std::string>& titles) {
  if (!engine_) throw UsageError("fasttext: predict before train or load");
  std::vector<Prediction> out(titles.size());
  parallel_for(
      titles.size(), threads_,
      [&](std::size_t begin, std::size_t end, int) {
        Predictor predictor(*engine_);
        for (std::size_t i = begin; i < end; ++i)
          out[i] = prediction_from_probs(predictor.probs(normalize_title(titles[i], settings_.fold_punctuation)));
      },
      kMinTitlesPerThread);
  return out;
}

}  // namespace

std::unique_ptr<Classifier> make_classifier() { return std::make_unique<FastTextClassifier>(); }

nlohmann::json default_config() { return settings_table().documented(); }

}  // namespace newscls::fasttext
