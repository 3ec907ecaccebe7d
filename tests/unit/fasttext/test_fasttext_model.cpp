// fasttext training, prediction, bundles, broken payloads, quantisation and autotune on a
// tiny separable corpus.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "fasttext/engine.h"
#include "fasttext/fasttext.h"
#include "newscls/core/binary_io.h"
#include "newscls/core/bundle.h"
#include "newscls/core/config.h"
#include "newscls/core/error.h"
#include "newscls/workflow/registry.h"
#include "test_support.h"

namespace newscls::fasttext {
namespace {

namespace fs = std::filesystem;

// Four classes, each writing titles from its own characters: separable by unigrams alone.
Dataset separable(std::size_t per_class, std::uint64_t seed) {
  const std::vector<std::vector<std::string>> alphabets = {
      {"股", "基", "金", "债", "券", "市"}, {"球", "赛", "冠", "军", "队", "杯"},
      {"楼", "房", "盘", "租", "售", "宅"}, {"游", "戏", "玩", "家", "网", "服"}};
  std::mt19937_64 rng(seed);
  Dataset d;
  for (std::size_t i = 0; i < per_class; ++i) {
    for (int c = 0; c < 4; ++c) {
      const std::size_t len = 3 + rng() % 6;
      std::string title;
      for (std::size_t k = 0; k < len; ++k) title += alphabets[c][rng() % alphabets[c].size()];
      d.titles.push_back(title);
      d.labels.push_back(c);
    }
  }
  return d;
}

LabelSet four_labels() { return LabelSet{{"finance", "sports", "realty", "game"}}; }

double accuracy(Classifier& model, const Dataset& d) {
  const auto preds = model.predict_batch(d.titles);
  std::size_t ok = 0;
  for (std::size_t i = 0; i < preds.size(); ++i) ok += preds[i].label == d.labels[i];
  return static_cast<double>(ok) / static_cast<double>(d.size());
}

struct Trained {
  std::unique_ptr<Classifier> model;
  nlohmann::json facts;
};

Trained train_on(const Dataset& train, const std::vector<std::string>& overrides, const Dataset* dev = nullptr) {
  nlohmann::json cfg = default_config();
  for (const auto& o : overrides) apply_override(cfg, o);
  Trained t{make_classifier(), {}};
  t.model->configure(cfg);
  const LabelSet labels = four_labels();
  TrainContext ctx;
  ctx.train = &train;
  ctx.dev = dev;
  ctx.labels = &labels;
  ctx.threads = 1;
  t.facts = t.model->train(ctx);
  return t;
}

std::string save_bundle(const Classifier& model, const std::string& dir) {
  BundleWriter w(dir);
  model.save(w);
  Manifest m;
  m.family = "fasttext";
  m.labels = four_labels().names;
  m.config = model.config();
  w.commit(m);
  return dir;
}

void expect_same_predictions(Classifier& a, Classifier& b, const Dataset& d) {
  const auto pa = a.predict_batch(d.titles);
  const auto pb = b.predict_batch(d.titles);
  ASSERT_EQ(pa.size(), pb.size());
  for (std::size_t i = 0; i < pa.size(); ++i) {
    EXPECT_EQ(pa[i].label, pb[i].label);
    EXPECT_EQ(pa[i].probs, pb[i].probs) << "title " << i;
  }
}

TEST(FasttextModel, LearnsSeparableCorpusPerfectly) {
  const Dataset train = separable(50, 1), test = separable(20, 2);
  Trained t = train_on(train, {"epochs=10", "dim=16"});
  EXPECT_EQ(accuracy(*t.model, train), 1.0);
  EXPECT_EQ(accuracy(*t.model, test), 1.0);
  const auto p = t.model->predict_batch({test.titles[0]});
  ASSERT_EQ(p[0].probs.size(), 4u);
  float sum = 0;
  for (float v : p[0].probs) sum += v;
  EXPECT_NEAR(sum, 1.0f, 1e-5);
  EXPECT_EQ(p[0].score, p[0].probs[static_cast<std::size_t>(p[0].label)]);
}

TEST(FasttextModel, SoftmaxLossLearnsToo) {
  const Dataset train = separable(50, 3);
  Trained t = train_on(train, {"loss=softmax", "dim=16"});
  EXPECT_EQ(accuracy(*t.model, train), 1.0);
}

TEST(FasttextModel, UnknownTitleGetsUniformProbabilities) {
  Trained t = train_on(separable(20, 4), {"dim=8", "epochs=2"});
  const auto p = t.model->predict_batch({"", "xyz"});
  for (const auto& pred : p) {
    for (float v : pred.probs) EXPECT_FLOAT_EQ(v, 0.25f);
  }
}

TEST(FasttextModel, ThreadedPredictionMatchesSingleThread) {
  const Dataset train = separable(30, 5), test = separable(400, 6);
  Trained t = train_on(train, {"dim=8"});
  const auto one = t.model->predict_batch(test.titles);
  t.model->set_threads(2);
  const auto two = t.model->predict_batch(test.titles);
  for (std::size_t i = 0; i < one.size(); ++i) EXPECT_EQ(one[i].probs, two[i].probs);
}

TEST(FasttextModel, BundleRoundTripGivesIdenticalPredictions) {
  const std::string dir = testing::scratch_dir();
  const Dataset train = separable(40, 7), test = separable(30, 8);
  Trained t = train_on(train, {"dim=12", "ensemble=2", "skip_bigrams=true"});
  save_bundle(*t.model, dir + "/m");
  auto loaded = load_classifier(dir + "/m");
  EXPECT_EQ(loaded->family(), "fasttext");
  EXPECT_EQ(loaded->config(), t.model->config());
  expect_same_predictions(*t.model, *loaded, test);
}

TEST(FasttextModel, ManifestContradictingThePayloadIsRefused) {
  const std::string dir = testing::scratch_dir();
  Trained t = train_on(separable(20, 7), {"dim=8"});
  const auto bundle_with = [&](const std::string& name, const char* key, const nlohmann::json& value) {
    BundleWriter w(dir + "/" + name);
    t.model->save(w);
    Manifest m;
    m.family = "fasttext";
    m.labels = four_labels().names;
    m.config = t.model->config();
    m.config[key] = value;
    w.commit(m);
    return dir + "/" + name;
  };
  const auto refusal = [](const std::string& bundle) {
    try {
      load_classifier(bundle);
    } catch (const ModelFormatError& e) {
      return std::string(e.what());
    }
    return std::string("loaded");
  };
  EXPECT_THAT(refusal(bundle_with("ngrams", "ngram_max", 4)),
              ::testing::AllOf(::testing::HasSubstr("fasttext.bin"), ::testing::HasSubstr("ngram_max 3"),
                               ::testing::HasSubstr("says 4")));
  EXPECT_THAT(refusal(bundle_with("int8", "quantize", true)), ::testing::HasSubstr("quantize false"));
  EXPECT_THAT(refusal(bundle_with("idf", "idf", false)), ::testing::HasSubstr("idf true"));
  EXPECT_EQ(refusal(bundle_with("dim", "dim", 99)), "loaded");  // dim is folded away, not in the payload
}

TEST(FasttextModel, QuantizedBundleIsSmallAndStillAccurate) {
  const std::string dir = testing::scratch_dir();
  const Dataset train = separable(50, 9), test = separable(20, 10);
  Trained full = train_on(train, {"dim=32"});
  Trained small = train_on(train, {"dim=32", "quantize=true", "quantize_keep_rows=40"});
  EXPECT_EQ(small.facts["quantize"]["rows_kept"], 40);
  save_bundle(*full.model, dir + "/full");
  save_bundle(*small.model, dir + "/small");
  const auto full_bytes = fs::file_size(dir + "/full/fasttext.bin");
  const auto small_bytes = fs::file_size(dir + "/small/fasttext.bin");
  EXPECT_LT(small_bytes * 3, full_bytes);
  auto loaded = load_classifier(dir + "/small");
  EXPECT_EQ(accuracy(*loaded, test), 1.0);
  expect_same_predictions(*small.model, *loaded, test);
}

TEST(FasttextModel, AutotuneRecordsTrialsAndChoice) {
  const Dataset train = separable(30, 11), dev = separable(10, 12);
  Trained t = train_on(train, {"dim=8", "autotune=true", "autotune_seconds=1"}, &dev);
  ASSERT_TRUE(t.facts.contains("autotune"));
  EXPECT_GE(t.facts["autotune"]["trials"].size(), 1u);
  EXPECT_EQ(t.facts["autotune"]["best_dev_accuracy"], 1.0);
  EXPECT_EQ(t.facts["chosen"], t.model->config());
}

TEST(FasttextModel, AutotuneWithoutDevIsAnError) {
  EXPECT_THROW(train_on(separable(5, 13), {"autotune=true"}), UsageError);
}

TEST(FasttextModel, PredictBeforeTrainingIsAnError) {
  auto model = make_classifier();
  EXPECT_THROW(model->predict_batch({"x"}), UsageError);
}

// Broken payloads: every way of cutting or corrupting the file is a ModelFormatError.
class FasttextPayload : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::scratch_dir();
    Trained t = train_on(separable(10, 14), {"dim=4", "epochs=1"});
    save_bundle(*t.model, dir_ + "/m");
    path_ = dir_ + "/m/fasttext.bin";
    std::ifstream in(path_, std::ios::binary);
    bytes_.assign(std::istreambuf_iterator<char>(in), {});
  }
  void write(const std::string& bytes) { testing::write_text(dir_ + "/broken.bin", bytes); }
  void expect_rejected() { EXPECT_THROW(load_engine(dir_ + "/broken.bin", 4), ModelFormatError); }

  std::string dir_, path_, bytes_;
};

TEST_F(FasttextPayload, LoadsIntact) { EXPECT_EQ(load_engine(path_, 4).num_labels, 4); }

TEST_F(FasttextPayload, EveryTruncationIsRejected) {
  for (std::size_t cut = 0; cut < bytes_.size(); cut += std::max<std::size_t>(1, bytes_.size() / 97)) {
    write(bytes_.substr(0, cut));
    expect_rejected();
  }
  write(bytes_.substr(0, bytes_.size() - 1));
  expect_rejected();
}

TEST_F(FasttextPayload, TrailingBytesWrongMagicAndLabelCountAreRejected) {
  write(bytes_ + "x");
  expect_rejected();
  std::string bad = bytes_;
  bad[0] = 'X';
  write(bad);
  expect_rejected();
  EXPECT_THROW(load_engine(path_, 3), ModelFormatError);
}

TEST_F(FasttextPayload, NewerVersionIsRejected) {
  std::string newer = bytes_;
  newer[4] = 9;
  write(newer);
  expect_rejected();
}

TEST_F(FasttextPayload, HugeCountsAreRejectedWithoutAllocating) {
  const std::string p = dir_ + "/broken.bin";
  {
    PayloadWriter w(p, "NCFT", 1);
    w.u32(4);           // labels
    w.u8(0);            // softmax
    w.u8(0);            // mean pooling
    w.u32(3);
    w.u32(1u << 28);    // buckets
    w.u32(1);
    w.u32(1);
    w.u8(0);
    w.u64(1ull << 60);  // token count no file can hold
    w.finish();
  }
  EXPECT_THROW(load_engine(p, 4), ModelFormatError);
  {
    PayloadWriter w(p, "NCFT", 1);
    w.u32(4);
    w.u8(7);            // unknown loss
    w.finish();
  }
  EXPECT_THROW(load_engine(p, 4), ModelFormatError);
}

}  // namespace
}  // namespace newscls::fasttext
