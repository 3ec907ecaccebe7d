// The sparse random forest on separable toy data: class c always has feature c (value in
// 0.5..1) and some shared noise features, so a forest must classify it perfectly.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
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

// The forest written to `path` in the current payload version and read back, every byte used.
RandomForest saved_and_loaded(const RandomForest& forest, const std::string& path) {
  {
    PayloadWriter w(path, "NCRF", RandomForest::kPayloadVersion);
    forest.save(w);
    w.finish();
  }
  PayloadReader r(path, "NCRF", RandomForest::kPayloadVersion);
  RandomForest loaded = RandomForest::load(r);
  r.expect_end();
  return loaded;
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
  EXPECT_THROW(RandomForest::fit(train.x, std::vector<int>(29, 0), kClasses, options(1, 1), {}), std::invalid_argument);
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
  const RandomForest loaded = saved_and_loaded(forest, path);
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
    w.u32(2);                  // classes
    w.u64(4);                  // features
    w.u32_array({0});          // one tree rooted at node 0
    w.i32_array({3, -1, -1});  // root splits on feature 3
    w.f32_array(std::vector<float>{0.5f, 0.0f, 0.0f});
    w.i32_array({0, 0, 1});  // root's child points at itself: a cycle
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

std::uint32_t bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

constexpr std::uint32_t leaf(std::uint32_t distribution) { return ~distribution; }  // -1 - d

// The hand-made tree as a node stream: words 0-2 node 0, 3 node 1, 4-6 node 2, 7 and 8 its leaves.
const std::vector<std::uint32_t> kHandWords = {5, bits(0.5f), 4, leaf(0), 7, bits(0.25f), 8, leaf(1), leaf(2)};

void write_v3(const std::string& path, const std::vector<std::uint32_t>& roots, const std::vector<std::uint32_t>& words,
              const std::vector<float>& distributions) {
  PayloadWriter w(path, "NCRF", 3);
  w.u32(2);
  w.u64(10000);
  w.u64(roots.size());
  w.u64(words.size());
  w.u64(distributions.size());
  w.block(roots);
  w.block(words);
  w.block(distributions);
  w.finish();
}

// The forest payload at `path` is refused with "corrupt forest: <error>", naming the file.
void expect_refused(const std::string& path, const char* what, const char* error) {
  try {
    PayloadReader r(path, "NCRF", RandomForest::kPayloadVersion);
    RandomForest::load(r);
    ADD_FAILURE() << what << ": loaded";
  } catch (const ModelFormatError& e) {
    EXPECT_NE(std::string(e.what()).find(std::string("corrupt forest: ") + error), std::string::npos)
        << what << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(Forest, HandMadeTreeInEveryPayloadVersion) {
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
  // Version 3: the node stream (a split: feature, threshold bits, its right child's word).
  write_v3(dir + "/v3.bin", {0}, kHandWords, {1, 0, 0.5f, 0.5f, 0, 1});
  EXPECT_EQ(hand_probs(dir + "/v3.bin"), kHandProbs);
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
    expect_refused(path, c.what, c.error);
  }
  write_v2(path, {0, 3}, {5, -1, -2, -2}, {0.5f}, dists);  // the same shapes, well formed
  PayloadReader r(path, "NCRF", RandomForest::kPayloadVersion);
  EXPECT_EQ(RandomForest::load(r).num_trees(), 2u);
}

TEST(Forest, MalformedVersion3TreesRefused) {
  const std::string path = newscls::testing::scratch_dir() + "/bad3.bin";
  const std::vector<float> dists = {1, 0, 0, 1};
  const std::uint32_t half = bits(0.5f);
  struct Case {
    const char* what;
    std::vector<std::uint32_t> roots, words;
    std::vector<float> distributions;
    const char* error;  // which check catches it
  };
  const std::vector<std::uint32_t> ok = {5, half, 4, leaf(0), leaf(1)};  // a split and its two leaves
  const std::vector<Case> cases = {
      {"split without children", {0}, {5, half, 3}, dists, "tree 0 is incomplete"},
      {"split missing its right child", {0}, {5, half, 4, leaf(0)}, dists, "tree 0 is incomplete"},
      {"node past the end of its tree",
       {0},
       {leaf(0), leaf(1)},
       dists,
       "node at word 1 of tree 0 is past the end of its tree"},
      {"right child elsewhere",
       {0},
       {5, half, 5, leaf(0), leaf(1)},
       dists,
       "node at word 0 of tree 0 has its right child elsewhere"},
      {"right child inside the left",
       {0},
       {5, half, 3, leaf(0), leaf(1)},
       dists,
       "node at word 0 of tree 0 has its right child elsewhere"},
      {"second tree starts inside the first", {0, 3}, ok, dists, "tree 0 is incomplete"},
      {"unknown feature",
       {0},
       {10000, half, 4, leaf(0), leaf(1)},
       dists,
       "node at word 0 of tree 0 splits on an unknown feature"},
      {"no such distribution",
       {0},
       {5, half, 4, leaf(0), leaf(2)},
       dists,
       "node at word 4 of tree 0 has no distribution"},
      {"negative threshold",
       {0},
       {5, bits(-0.5f), 4, leaf(0), leaf(1)},
       dists,
       "node at word 0 of tree 0 has a negative threshold"},
      {"NaN threshold",
       {0},
       {5, bits(std::nanf("")), 4, leaf(0), leaf(1)},
       dists,
       "node at word 0 of tree 0 has a negative threshold"},
      {"root past the nodes", {5}, ok, dists, "nodes outside every tree"},
      {"node before the first tree", {1}, {leaf(0), leaf(0)}, dists, "nodes outside every tree"},
      {"nodes without trees", {}, {leaf(0)}, dists, "nodes outside every tree"},
      {"second tree empty",
       {0, 5, 5},
       {5, half, 4, leaf(0), leaf(1), leaf(1)},
       dists,
       "tree 1 is empty, out of order or past the nodes"},
      {"distribution value above 1", {0}, {leaf(0)}, {1.5f, 0}, "a distribution value outside [0, 1]"},
      {"NaN distribution value", {0}, {leaf(0)}, {std::nanf(""), 0}, "a distribution value outside [0, 1]"},
      {"distribution table size", {0}, {leaf(0)}, {1, 0, 1}, "distribution table size"},
  };
  for (const Case& c : cases) {
    write_v3(path, c.roots, c.words, c.distributions);
    expect_refused(path, c.what, c.error);
  }
  write_v3(path, {0, 5}, {5, half, 4, leaf(0), leaf(1), leaf(1)}, dists);  // the same shapes, well formed
  PayloadReader r(path, "NCRF", RandomForest::kPayloadVersion);
  const RandomForest forest = RandomForest::load(r);
  EXPECT_EQ(forest.num_trees(), 2u);
  EXPECT_EQ(forest.num_nodes(), 4u);
}

// A forest an earlier build saved (version 2) predicts the same once saved as version 3.
TEST(Forest, Version2ResavedAsVersion3PredictsTheSame) {
  const std::string v2 = newscls::testing::source_dir() + "/tests/fixtures/bundles_v1/bundles/tfidf-rf/forest.bin";
  PayloadReader r2(v2, "NCRF", RandomForest::kPayloadVersion);
  ASSERT_EQ(r2.version(), 2u);
  const RandomForest old = RandomForest::load(r2);
  const std::string v3 = newscls::testing::scratch_dir() + "/forest.bin";
  const RandomForest resaved = saved_and_loaded(old, v3);
  EXPECT_EQ(resaved.stats(), old.stats());
  std::mt19937 rng(9);
  const auto features = static_cast<std::uint32_t>(old.num_features());
  std::vector<SparseRow> rows(200);
  for (SparseRow& row : rows) {
    for (std::uint32_t f = rng() % 50; f < features; f += 1 + rng() % 50) row.emplace_back(f, 0.05f * (rng() % 20));
  }
  const auto k = static_cast<std::size_t>(old.num_classes());
  std::vector<float> a(rows.size() * k), b(rows.size() * k);
  old.predict_proba_batch(rows.data(), rows.size(), a.data());
  resaved.predict_proba_batch(rows.data(), rows.size(), b.data());
  EXPECT_EQ(a, b);
}

TEST(Forest, LeavesShareDistributions) {
  const Toy train = make_toy(300, 1);
  const RandomForest forest = RandomForest::fit(train.x, train.y, kClasses, options(2, 7), {});
  // Pure leaves dominate toy data: far fewer distinct distributions than leaves.
  EXPECT_LT(forest.num_distributions() * 4, forest.stats()["leaves"].get<std::size_t>());
}

}  // namespace
}  // namespace newscls::tfidf_rf
