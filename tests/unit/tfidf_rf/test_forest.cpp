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

#include "newscls/core/binary_io.h"
#include "newscls/core/error.h"
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
  // One candidate per split sends most nodes to the fallback over the node's other features.
  for (int candidates : {6, 1}) {
    ForestOptions rows = options(2, 7), columns = options(2, 7);
    rows.features_per_split = columns.features_per_split = candidates;
    rows.walk = 1;
    columns.walk = 2;
    const auto a = all_probs(RandomForest::fit(train.x, train.y, kClasses, rows, {}), test.rows);
    const auto b = all_probs(RandomForest::fit(train.x, train.y, kClasses, columns, {}), test.rows);
    EXPECT_EQ(a, b) << candidates << " candidates per split";
  }
}

TEST(Forest, FallbackStillSplitsWithOneCandidate) {
  const Toy train = make_toy(300, 1);
  ForestOptions o = options(2, 7);
  o.features_per_split = 1;
  const RandomForest forest = RandomForest::fit(train.x, train.y, kClasses, o, {});
  EXPECT_DOUBLE_EQ(accuracy(forest, train), 1.0);
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
    PayloadWriter w(path, "NCRF", RandomForest::kPayloadVersion);
    forest.save(w);
    w.finish();
  }
  PayloadReader r(path, "NCRF", RandomForest::kPayloadVersion);
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
          PayloadReader cr(cut, "NCRF", RandomForest::kPayloadVersion);
          RandomForest::load(cr);
          cr.expect_end();
        },
        ModelFormatError)
        << "length " << len;
  }
}

TEST(Forest, CorruptVersion1NodeIndexRefused) {
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
  PayloadReader r(path, "NCRF", RandomForest::kPayloadVersion);
  EXPECT_THROW(RandomForest::load(r), ModelFormatError);
}

// One hand-made tree, 2 classes, 10000 features (more than the walk's 8192-bit row
// signature, so features 5 and 8197 share a signature bit):
//   node 0: feature 5 <= 0.5 ? node 1 : node 2
//   node 1: leaf (1, 0)
//   node 2: feature 7 <= 0.25 ? leaf (0.5, 0.5) : leaf (0, 1)
const std::vector<SparseRow> kHandRows = {{}, {{8197, 1.0f}}, {{5, -1.0f}}, {{5, 0.9f}}, {{5, 0.9f}, {7, 0.3f}}};
const std::vector<float> kHandProbs = {1, 0, 1, 0, 1, 0, 0.5f, 0.5f, 0, 1};

std::vector<float> hand_probs(const std::string& path) {
  PayloadReader r(path, "NCRF", RandomForest::kPayloadVersion);
  const RandomForest forest = RandomForest::load(r);
  r.expect_end();
  std::vector<float> probs(kHandRows.size() * 2);
  forest.predict_proba_batch(kHandRows.data(), kHandRows.size(), probs.data());
  return probs;
}

void write_v2(const std::string& path, const std::vector<std::uint32_t>& roots, const std::vector<std::int32_t>& codes,
              const std::vector<float>& thresholds, const std::vector<float>& distributions) {
  PayloadWriter w(path, "NCRF", 2);
  w.u32(2);
  w.u64(10000);
  w.u32_array(roots);
  w.i32_array(codes);
  w.f32_array(thresholds);
  w.f32_array(distributions);
  w.finish();
}

TEST(Forest, HandMadeTreeInBothPayloadVersions) {
  const std::string dir = newscls::testing::scratch_dir();
  {
    PayloadWriter w(dir + "/v1.bin", "NCRF", 1);
    w.u32(2);
    w.u64(10000);
    w.u32_array({0});
    w.i32_array({5, -1, 7, -1, -1});
    w.f32_array(std::vector<float>{0.5f, 0, 0.25f, 0, 0});
    w.i32_array({1, 0, 3, 1, 2});
    w.f32_array(std::vector<float>{1, 0, 0.5f, 0.5f, 0, 1});
    w.finish();
  }
  EXPECT_EQ(hand_probs(dir + "/v1.bin"), kHandProbs);
  // Version 2: preorder codes (-1 - d for a leaf with distribution d), one threshold per split.
  write_v2(dir + "/v2.bin", {0}, {5, -1, 7, -2, -3}, {0.5f, 0.25f}, {1, 0, 0.5f, 0.5f, 0, 1});
  EXPECT_EQ(hand_probs(dir + "/v2.bin"), kHandProbs);
}

TEST(Forest, Version1TreeReachingANodeTwiceRefused) {
  const std::string path = newscls::testing::scratch_dir() + "/shared.bin";
  {
    PayloadWriter w(path, "NCRF", 1);
    w.u32(2);
    w.u64(4);
    w.u32_array({0});
    w.i32_array({1, 2, 3, -1, -1});  // nodes 1 and 2 both have children 3 and 4
    w.f32_array(std::vector<float>{0.5f, 0.5f, 0.5f, 0, 0});
    w.i32_array({1, 3, 3, 0, 1});
    w.f32_array(std::vector<float>{1, 0, 0, 1});
    w.finish();
  }
  PayloadReader r(path, "NCRF", RandomForest::kPayloadVersion);
  EXPECT_THROW(RandomForest::load(r), ModelFormatError);
}

TEST(Forest, MalformedVersion2TreesRefused) {
  const std::string path = newscls::testing::scratch_dir() + "/bad2.bin";
  const std::vector<float> dists = {1, 0, 0, 1};
  struct Case {
    const char* what;
    std::vector<std::uint32_t> roots;
    std::vector<std::int32_t> codes;
    std::vector<float> thresholds;
    const char* error;  // which check catches it
  };
  const std::vector<Case> cases = {
      {"split without children", {0}, {5}, {0.5f}, "tree 0 is incomplete"},
      {"split missing its right child", {0}, {5, -1}, {0.5f}, "tree 0 is incomplete"},
      {"node past the end of its tree", {0}, {-1, -2}, {}, "node 1 of tree 0 is past the end of its tree"},
      {"second tree starts inside the first", {0, 1}, {5, -1, -2}, {0.5f}, "tree 0 is incomplete"},
      {"unknown feature", {0}, {10000, -1, -2}, {0.5f}, "node 0 of tree 0 splits on an unknown feature"},
      {"no such distribution", {0}, {5, -1, -3}, {0.5f}, "node 2 of tree 0 has no distribution"},
      {"negative threshold", {0}, {5, -1, -2}, {-0.5f}, "node 0 of tree 0 has a negative threshold"},
      {"missing threshold", {0}, {5, -1, -2}, {}, "fewer thresholds than splits"},
      {"extra threshold", {0}, {5, -1, -2}, {0.5f, 0.5f}, "more thresholds than splits"},
      {"root past the nodes", {3}, {5, -1, -2}, {0.5f}, "nodes outside every tree"},
      {"node before the first tree", {1}, {-1, -1}, {}, "nodes outside every tree"},
      {"nodes without trees", {}, {-1}, {}, "nodes outside every tree"},
      {"second tree empty", {0, 3, 3}, {5, -1, -2, -2}, {0.5f}, "tree 1 is empty, out of order or past the nodes"},
  };
  for (const Case& c : cases) {
    write_v2(path, c.roots, c.codes, c.thresholds, dists);
    try {
      PayloadReader r(path, "NCRF", RandomForest::kPayloadVersion);
      RandomForest::load(r);
      ADD_FAILURE() << c.what << ": loaded";
    } catch (const ModelFormatError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("corrupt forest: ") + c.error), std::string::npos)
          << c.what << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  }
  write_v2(path, {0, 3}, {5, -1, -2, -2}, {0.5f}, dists);  // the same shapes, well formed
  PayloadReader r(path, "NCRF", RandomForest::kPayloadVersion);
  EXPECT_EQ(RandomForest::load(r).num_trees(), 2u);
}

TEST(Forest, LeavesShareDistributions) {
  const Toy train = make_toy(300, 1);
  const RandomForest forest = RandomForest::fit(train.x, train.y, kClasses, options(2, 7), {});
  // Pure leaves dominate toy data: far fewer distinct distributions than leaves.
  EXPECT_LT(forest.num_distributions() * 4, forest.stats()["leaves"].get<std::size_t>());
}

}  // namespace
}  // namespace newscls::tfidf_rf
