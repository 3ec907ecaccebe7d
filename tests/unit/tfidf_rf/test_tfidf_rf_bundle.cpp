// The tfidf-rf classifier end to end on a tiny synthetic corpus: train, save into a
// bundle, load back with identical predictions; a truncated payload is refused cleanly.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "newscls/core/bundle.h"
#include "newscls/core/config.h"
#include "newscls/core/error.h"
#include "newscls/workflow/registry.h"
#include "config_table_checks.h"
#include "test_support.h"
#include "tfidf_rf/settings.h"
#include "tfidf_rf/tfidf_rf.h"

namespace newscls::tfidf_rf {
namespace {

namespace fs = std::filesystem;

const std::vector<std::vector<std::string>> kClassWords = {
    {"篮球", "比赛", "球员", "冠军", "联赛"},
    {"股市", "银行", "基金", "利率", "投资"},
    {"游戏", "玩家", "网游", "电竞", "版本"},
};
const std::vector<std::string> kFiller = {"今日", "新闻", "报道", "最新", "消息"};

Dataset make_titles(int n, unsigned seed) {
  std::mt19937 rng(seed);
  Dataset d;
  d.path = "synthetic";
  for (int i = 0; i < n; ++i) {
    const int label = i % 3;
    const auto& words = kClassWords[static_cast<std::size_t>(label)];
    std::string title = kFiller[rng() % kFiller.size()] + words[rng() % words.size()] + words[rng() % words.size()] +
                        kFiller[rng() % kFiller.size()];
    d.titles.push_back(title);
    d.labels.push_back(label);
  }
  return d;
}

struct Trained {
  std::unique_ptr<Classifier> model;
  Dataset test;
  LabelSet labels;
};

Trained train_small(const std::vector<std::string>& overrides) {
  Trained t;
  t.labels.names = {"sports", "finance", "game"};
  static const Dataset train = make_titles(240, 1);
  t.test = make_titles(60, 2);
  nlohmann::json config = default_config();
  apply_override(config, "n_trees=8");
  for (const std::string& o : overrides) apply_override(config, o);
  t.model = make_classifier();
  t.model->configure(config);
  TrainContext ctx;
  ctx.train = &train;
  ctx.labels = &t.labels;
  ctx.threads = 2;
  t.model->train(ctx);
  return t;
}

std::string save(const Trained& t, const std::string& dir) {
  BundleWriter w(dir);
  t.model->save(w);
  Manifest m;
  m.family = t.model->family();
  m.labels = t.labels.names;
  m.config = t.model->config();
  w.commit(m);
  return dir;
}

std::unique_ptr<Classifier> load(const std::string& dir) {
  Bundle bundle = Bundle::open(dir);
  auto model = make_classifier();
  model->configure(bundle.manifest().config);
  model->load(bundle);
  return model;
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void expect_same_predictions(Classifier& a, Classifier& b, const std::vector<std::string>& titles) {
  const auto pa = a.predict_batch(titles), pb = b.predict_batch(titles);
  ASSERT_EQ(pa.size(), pb.size());
  for (std::size_t i = 0; i < pa.size(); ++i) {
    EXPECT_EQ(pa[i].label, pb[i].label);
    EXPECT_EQ(pa[i].probs, pb[i].probs);
  }
}

TEST(TfidfRfBundle, LearnsAndRoundTripsWithIdenticalPredictions) {
  Trained t = train_small({});
  const auto predictions = t.model->predict_batch(t.test.titles);
  int correct = 0;
  for (std::size_t i = 0; i < predictions.size(); ++i) correct += predictions[i].label == t.test.labels[i];
  // Unnormalised rows (l2_normalize false, the default) leave 8 trees one miss here.
  EXPECT_GE(correct, static_cast<int>(t.test.size()) - 2);

  const std::string dir = save(t, newscls::testing::scratch_dir() + "/model");
  auto loaded = load(dir);
  expect_same_predictions(*t.model, *loaded, t.test.titles);
  expect_same_predictions(*t.model, *loaded, {"", "完全不同的标题", "ＮＢＡ 篮球"});
}

TEST(TfidfRfBundle, SubwordFeaturesRoundTrip) {
  Trained t = train_small({"subword=true", "subword_vocab_size=100"});
  const std::string dir = save(t, newscls::testing::scratch_dir() + "/model");
  EXPECT_TRUE(fs::exists(dir + "/subword.bin"));
  auto loaded = load(dir);
  expect_same_predictions(*t.model, *loaded, t.test.titles);
}

TEST(TfidfRfBundle, TruncatedPayloadsAreRefused) {
  Trained t = train_small({});
  const std::string root = newscls::testing::scratch_dir();
  const std::string good = save(t, root + "/good");
  for (const std::string payload : {"tfidf.bin", "forest.bin"}) {
    const std::string bytes = read_bytes(good + "/" + payload);
    for (std::size_t len : {std::size_t{0}, std::size_t{6}, std::size_t{20}, bytes.size() / 2, bytes.size() - 1}) {
      // A bundle whose checksums match the truncated file, so the payload reader must notice.
      const std::string dir = root + "/cut-" + payload + "-" + std::to_string(len);
      {
        BundleWriter w(dir);
        for (const std::string name : {"tfidf.bin", "forest.bin"}) {
          const std::string content = read_bytes(good + "/" + name);
          std::ofstream(w.payload_path(name), std::ios::binary) << (name == payload ? content.substr(0, len) : content);
        }
        Manifest m = Bundle::open(good).manifest();
        m.payloads.clear();
        w.commit(m);
      }
      EXPECT_THROW(load(dir), ModelFormatError) << payload << " cut to " << len;
    }
  }
}

TEST(TfidfRfBundle, IdfOutsideItsRangeIsRefused) {
  Trained t = train_small({});
  const std::string root = newscls::testing::scratch_dir();
  const std::string good = save(t, root + "/good");
  const std::string bytes = read_bytes(good + "/tfidf.bin");
  for (const float bad : {std::nanf(""), 0.5f, -1.0f}) {  // the last idf, the payload's last 4 bytes
    std::string changed = bytes;
    std::memcpy(changed.data() + changed.size() - sizeof bad, &bad, sizeof bad);
    const std::string dir = root + "/idf-" + std::to_string(bad);
    {
      BundleWriter w(dir);
      std::ofstream(w.payload_path("tfidf.bin"), std::ios::binary) << changed;
      std::ofstream(w.payload_path("forest.bin"), std::ios::binary) << read_bytes(good + "/forest.bin");
      Manifest m = Bundle::open(good).manifest();
      w.commit(m);
    }
    EXPECT_THROW(load(dir), ModelFormatError) << "idf " << bad;
  }
}

TEST(TfidfRfBundle, ConfigValidation) {
  auto model = make_classifier();
  nlohmann::json config = default_config();
  config["max_features_per_split"] = "cube";
  EXPECT_THROW(model->configure(config), ConfigError);
  config = default_config();
  config["n_trees"] = 0;
  EXPECT_THROW(model->configure(config), ConfigError);
  config = default_config();
  config["ngram_min"] = 3;
  config["ngram_max"] = 2;
  EXPECT_THROW(model->configure(config), ConfigError);
  config = default_config();
  config["max_features_per_split"] = "sqrt*3";
  EXPECT_NO_THROW(model->configure(config));
  config["max_features_per_split"] = "0.05";
  EXPECT_NO_THROW(model->configure(config));
  for (const char* not_a_count : {"1.5", " 8", "sqrt* 2"}) {
    config["max_features_per_split"] = not_a_count;
    EXPECT_THROW(model->configure(config), ConfigError) << not_a_count;
  }
  config["max_features_per_split"] = "8";
  EXPECT_NO_THROW(model->configure(config));
  EXPECT_THROW(model->predict_batch({"x"}), UsageError);
}

TEST(TfidfRfSettings, EachKeyOfTheTableHolds) {
  newscls::testing::expect_table_holds(settings_table(), parse_settings);
}

}  // namespace
}  // namespace newscls::tfidf_rf
