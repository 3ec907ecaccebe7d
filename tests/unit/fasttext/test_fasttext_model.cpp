// fasttext training, prediction, bundles, broken payloads, quantisation and autotune on a
// tiny separable corpus.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "fasttext/engine.h"
#include "fasttext/fasttext.h"
#include "newscls/core/atomic_file.h"
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
  const std::vector<std::vector<std::string>> alphabets = {{"股", "基", "金", "债", "券", "市"},
                                                           {"球", "赛", "冠", "军", "队", "杯"},
                                                           {"楼", "房", "盘", "租", "售", "宅"},
                                                           {"游", "戏", "玩", "家", "网", "服"}};
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
    w.u32(4);  // labels
    w.u8(0);   // softmax
    w.u8(0);   // mean pooling
    w.u32(3);
    w.u32(1u << 28);  // buckets
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
    w.u8(7);  // unknown loss
    w.finish();
  }
  EXPECT_THROW(load_engine(p, 4), ModelFormatError);
}

// The version-1 writer this build replaced: such payloads must still load.
void save_v1(const Engine& e, const std::string& path) {
  PayloadWriter w(path, "NCFT", 1);
  write_header(w, e);
  w.u64(e.features.tokens().size());
  for (const std::string& t : e.features.tokens()) w.str(t);
  w.u32_array(e.features.kept_buckets().to_vector());
  w.f32_array(e.row_weights.to_vector());
  w.u8(e.quantized ? 1 : 0);
  if (!e.quantized) {
    w.f32_array(e.table.to_vector());
  } else {
    w.f32_array(e.row_scales.to_vector());
    w.u64(e.codes.size());
    for (std::int8_t c : e.codes) w.u8(static_cast<std::uint8_t>(c));
  }
  w.finish();
}

std::vector<std::vector<float>> all_probs(const Engine& e, const std::vector<std::string>& titles) {
  Predictor p(e);
  std::vector<std::vector<float>> out;
  for (const std::string& t : titles) out.push_back(p.probs(t));
  return out;
}

std::vector<std::string> fixture_titles() {
  std::ifstream in(testing::source_dir() + "/tests/fixtures/bundles_v1/titles.txt");
  std::vector<std::string> titles;
  for (std::string line; std::getline(in, line);) titles.push_back(line);
  return titles;
}

TEST(FasttextPayloadVersions, Version1ResavedAsVersion2PredictsTheSame) {
  // Written by an earlier build: its n-gram rows in first-appearance order.
  const Engine v1 = load_engine(testing::source_dir() + "/tests/fixtures/bundles_v1/bundles/fasttext/fasttext.bin", 10);
  EXPECT_FALSE(v1.features.ids_by_bucket().empty());
  const std::string path = testing::scratch_dir() + "/fasttext.bin";
  save_engine(v1, path);
  const Engine v2 = load_engine(path, 10);
  EXPECT_TRUE(v2.features.ids_by_bucket().empty());  // saved in bucket order
  const auto& kept = v2.features.kept_buckets();
  EXPECT_TRUE(std::is_sorted(kept.begin(), kept.end()));
  const std::vector<std::string> titles = fixture_titles();
  ASSERT_GT(titles.size(), 100u);
  EXPECT_EQ(all_probs(v1, titles), all_probs(v2, titles));
}

TEST(FasttextPayloadVersions, QuantizedVersion1StillLoads) {
  const std::string dir = testing::scratch_dir();
  Trained t = train_on(separable(30, 15), {"dim=8", "quantize=true", "quantize_keep_rows=30"});
  save_bundle(*t.model, dir + "/m");
  const Engine v2 = load_engine(dir + "/m/fasttext.bin", 4);
  ASSERT_TRUE(v2.quantized);
  save_v1(v2, dir + "/v1.bin");
  const Engine v1 = load_engine(dir + "/v1.bin", 4);
  EXPECT_TRUE(v1.quantized);
  const Dataset test = separable(10, 16);
  EXPECT_EQ(all_probs(v1, test.titles), all_probs(v2, test.titles));
}

// A version-2 payload by hand: 4 labels, 16 buckets, tokens "a" and "b", a float table of 0.5s.
std::string write_v2(const std::string& path, const std::vector<std::uint32_t>& token_offsets,
                     const std::vector<std::uint32_t>& kept) {
  PayloadWriter w(path, "NCFT", 2);
  w.u32(4);
  w.u8(0);
  w.u8(0);
  w.u32(2);   // ngram_max
  w.u32(16);  // buckets
  w.u32(1);
  w.u32(1);
  w.u8(0);
  w.u8(0);  // f32 table
  w.u64(token_offsets.size() - 1);
  w.u64(2);  // token bytes
  w.u64(kept.size());
  w.u64(0);  // no row weights
  w.block(token_offsets);
  w.block("ab", 2);
  w.block(kept);
  w.block(std::vector<float>((token_offsets.size() - 1 + kept.size()) * 4, 0.5f));
  w.finish();
  return path;
}

std::string refusal(const std::string& path) {
  try {
    load_engine(path, 4);
  } catch (const ModelFormatError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    return e.what();
  }
  return "loaded";
}

TEST(FasttextPayloadVersions, MalformedVersion2BlocksAreRefused) {
  const std::string dir = testing::scratch_dir();
  EXPECT_EQ(refusal(write_v2(dir + "/good.bin", {0, 1, 2}, {3, 5})), "loaded");
  EXPECT_EQ(load_engine(dir + "/good.bin", 4).features.tokens(), (std::vector<std::string>{"a", "b"}));
  EXPECT_THAT(refusal(write_v2(dir + "/order.bin", {0, 1, 2}, {5, 3})), ::testing::HasSubstr("not increasing"));
  EXPECT_THAT(refusal(write_v2(dir + "/repeat.bin", {0, 1, 2}, {5, 5})), ::testing::HasSubstr("repeated"));
  EXPECT_THAT(refusal(write_v2(dir + "/range.bin", {0, 1, 2}, {3, 16})), ::testing::HasSubstr("out of range"));
  EXPECT_THAT(refusal(write_v2(dir + "/span.bin", {0, 1, 3}, {3})), ::testing::HasSubstr("do not delimit"));
  EXPECT_THAT(refusal(write_v2(dir + "/back.bin", {0, 2, 1, 2}, {3})), ::testing::HasSubstr("do not delimit"));
  // An offset past the bytes, before the one that decreases: refused before any token is read
  // (test_hostile_payload_fasttext.sh found it with one flipped byte).
  EXPECT_THAT(refusal(write_v2(dir + "/past.bin", {0, 100000, 2}, {3})), ::testing::HasSubstr("do not delimit"));
  // The kept block starts at offset 80, after 2 bytes of padding that must be zero.
  std::string bytes = read_file(dir + "/good.bin");
  ASSERT_EQ(bytes.substr(78, 2), std::string(2, '\0'));
  bytes[79] = 1;
  testing::write_text(dir + "/padding.bin", bytes);
  EXPECT_THAT(refusal(dir + "/padding.bin"), ::testing::HasSubstr("padding"));
  // A table value out of bounds, in the last 4 bytes.
  bytes = read_file(dir + "/good.bin");
  const float nan = std::nanf("");
  std::memcpy(bytes.data() + bytes.size() - 4, &nan, 4);
  testing::write_text(dir + "/nan.bin", bytes);
  EXPECT_THAT(refusal(dir + "/nan.bin"), ::testing::HasSubstr("corrupt table value"));
}

TEST(FasttextPayloadVersions, HugeVersion2CountsAreRejectedWithoutAllocating) {
  const std::string path = testing::scratch_dir() + "/huge.bin";
  for (const std::uint64_t kept : {std::uint64_t{1} << 40, std::uint64_t{1} << 30}) {
    PayloadWriter w(path, "NCFT", 2);
    w.u32(4);
    w.u8(0);
    w.u8(0);
    w.u32(2);
    w.u32(16);
    w.u32(1);
    w.u32(1);
    w.u8(0);
    w.u8(0);
    w.u64(0);
    w.u64(0);
    w.u64(kept);  // more rows than ids, or than the file holds
    w.u64(0);
    w.finish();
    EXPECT_THROW(load_engine(path, 4), ModelFormatError) << kept;
  }
}

}  // namespace
}  // namespace newscls::fasttext
