// The sparse random forest on separable toy data: class c always has feature c (value in
// 0.5..1) and some shared noise features, so a forest must classify it perfectly.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "newscls/binary_io.h"
#include "newscls/error.h"
#include "test_support.h"
#include "tfidf_rf/forest.h"

namespace newscls::tfidf_rf {
namespace {

constexpr int kClasses = 3;
constexpr int kFeatures = 40;

struct Toy {
  CsrMatrix x;
  std::vector<SparseRow> rows;
  std::vector<int> y;
};

Toy make_toy(int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(0.5f, 1.0f);
  Toy t;
  t.x.cols = kFeatures;
  for (int i = 0; i < n; ++i) {
    const int label = i % kClasses;
    SparseRow row{{label, value(rng)}};
    for (int f = kClasses; f < kFeatures; ++f) {
      if (rng() % 4 == 0) row.emplace_back(f, value(rng));
    }
    t.x.append_row(row);
    t.rows.push_back(row);
    t.y.push_back(label);
  }
  return t;
}

std::vector<float> all_probs(const RandomForest& forest, const std::vector<SparseRow>& rows) {
  // One row at a time and all rows at once must agree.
  std::vector<float> probs(kClasses), out, batch(rows.size() * kClasses);
  for (const SparseRow& row : rows) {
    forest.predict_proba(row, probs.data());
    out.insert(out.end(), probs.begin(), probs.end());
  }
  forest.predict_proba_batch(rows.data(), rows.size(), batch.data());
  EXPECT_EQ(out, batch);
  return out;
}

ForestOptions options(int threads, std::uint64_t seed) {
  ForestOptions o;
  o.n_trees = 12;
  o.features_per_split = 6;
  o.threads = threads;
  o.seed = seed;
  return o;
}

double accuracy(const RandomForest& forest, const Toy& data) {
  const std::vector<float> p = all_probs(forest, data.rows);
  int correct = 0;
  for (std::size_t i = 0; i < data.y.size(); ++i) {
    const float* row = p.data() + i * kClasses;
    correct += std::max_element(row, row + kClasses) - row == data.y[i] ? 1 : 0;
  }
  return static_cast<double>(correct) / static_cast<double>(data.y.size());
}

TEST(Forest, SeparableDataIsLearnedPerfectly) {
  const Toy train = make_toy(300, 1), test = make_toy(150, 2);
  const RandomForest forest = RandomForest::fit(train.x, train.y, kClasses, options(2, 7), {});
  EXPECT_EQ(forest.num_trees(), 12u);
  EXPECT_DOUBLE_EQ(accuracy(forest, train), 1.0);
  EXPECT_DOUBLE_EQ(accuracy(forest, test), 1.0);
}

TEST(Forest, ProbabilitiesSumToOne) {
  const Toy train = make_toy(300, 1), test = make_toy(50, 3);
  const RandomForest forest = RandomForest::fit(train.x, train.y, kClasses, options(1, 7), {});
  const std::vector<float> p = all_probs(forest, test.rows);
  for (std::size_t i = 0; i < test.rows.size(); ++i) {
    const float sum = std::accumulate(p.begin() + i * kClasses, p.begin() + (i + 1) * kClasses, 0.0f);
    EXPECT_NEAR(sum, 1.0f, 1e-5);
  }
}

TEST(Forest, DeterministicForSeedWhateverTheThreads) {
  const Toy train = make_toy(300, 1), test = make_toy(100, 4);
  const auto a = all_probs(RandomForest::fit(train.x, train.y, kClasses, options(2, 7), {}), test.rows);
  const auto b = all_probs(RandomForest::fit(train.x, train.y, kClasses, options(2, 7), {}), test.rows);
  const auto c = all_probs(RandomForest::fit(train.x, train.y, kClasses, options(1, 7), {}), test.rows);
  const auto d = all_probs(RandomForest::fit(train.x, train.y, kClasses, options(2, 8), {}), test.rows);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, c);
  EXPECT_NE(a, d);
}

TEST(Forest, RowAndColumnWalksGrowTheSameTrees) {
  const Toy train = make_toy(300, 1), test = make_toy(100, 4);
  ForestOptions rows = options(2, 7), columns = options(2, 7);
  rows.walk = 1;
  columns.walk = 2;
  const auto a = all_probs(RandomForest::fit(train.x, train.y, kClasses, rows, {}), test.rows);
  const auto b = all_probs(RandomForest::fit(train.x, train.y, kClasses, columns, {}), test.rows);
  EXPECT_EQ(a, b);
}

TEST(Forest, MaxDepthAndTreeCallback) {
  const Toy train = make_toy(300, 1);
  ForestOptions o = options(2, 7);
  o.max_depth = 1;
  std::atomic<int> done{0};
  const RandomForest forest = RandomForest::fit(train.x, train.y, kClasses, o, [&done]() { ++done; });
  EXPECT_EQ(done.load(), 12);
  EXPECT_EQ(forest.stats()["max_depth"], 1);
  EXPECT_EQ(forest.num_nodes(), 12u * 3u);
}

TEST(Forest, RejectsBadInput) {
  Toy train = make_toy(30, 1);
  EXPECT_THROW(RandomForest::fit(train.x, std::vector<int>(29, 0), kClasses, options(1, 1), {}),
               std::invalid_argument);
  train.y[0] = kClasses;
  EXPECT_THROW(RandomForest::fit(train.x, train.y, kClasses, options(1, 1), {}), std::invalid_argument);
  train.y[0] = 0;
  train.x.values[0] = 0.0f;
  EXPECT_THROW(RandomForest::fit(train.x, train.y, kClasses, options(1, 1), {}), std::invalid_argument);
}

TEST(Forest, SaveLoadRoundTripAndTruncation) {
  const std::string dir = newscls::testing::scratch_dir();
  const std::string path = dir + "/forest.bin";
  const Toy train = make_toy(300, 1), test = make_toy(60, 5);
  const RandomForest forest = RandomForest::fit(train.x, train.y, kClasses, options(2, 7), {});
  {
    PayloadWriter w(path, "NCRF", 1);
    forest.save(w);
    w.finish();
  }
  PayloadReader r(path, "NCRF", 1);
  const RandomForest loaded = RandomForest::load(r);
  r.expect_end();
  EXPECT_EQ(all_probs(forest, test.rows), all_probs(loaded, test.rows));

  // Every truncation point must fail as a ModelFormatError, never crash.
  const auto size = std::filesystem::file_size(path);
  std::string bytes(size, '\0');
  std::FILE* f = std::fopen(path.c_str(), "rb");
  ASSERT_EQ(std::fread(bytes.data(), 1, size, f), size);
  std::fclose(f);
  const std::string cut = dir + "/cut.bin";
  for (std::size_t len = 8; len < size; len += 1 + size / 97) {
    newscls::testing::write_text(cut, bytes.substr(0, len));
    EXPECT_THROW(
        {
          PayloadReader cr(cut, "NCRF", 1);
          RandomForest::load(cr);
          cr.expect_end();
        },
        ModelFormatError)
        << "length " << len;
  }
}

TEST(Forest, CorruptNodeIndexRefused) {
  const std::string dir = newscls::testing::scratch_dir();
  const std::string path = dir + "/bad.bin";
  {
    PayloadWriter w(path, "NCRF", 1);
    w.u32(2);                        // classes
    w.u64(4);                        // features
    w.u32_array({0});                // one tree rooted at node 0
    w.i32_array({3, -1, -1});        // root splits on feature 3
    w.f32_array(std::vector<float>{0.5f, 0.0f, 0.0f});
    w.i32_array({0, 0, 1});          // root's child points at itself: a cycle
    w.f32_array(std::vector<float>{1, 0, 0, 1});
    w.finish();
  }
  PayloadReader r(path, "NCRF", 1);
  EXPECT_THROW(RandomForest::load(r), ModelFormatError);
}

}  // namespace
}  // namespace newscls::tfidf_rf
