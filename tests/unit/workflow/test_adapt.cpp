// The reader's feed (core/feed) and the choice of pseudo-labels (workflow/pseudo_labels).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "newscls/core/error.h"
#include "newscls/core/feed.h"
#include "newscls/core/sha256.h"
#include "test_support.h"
#include "workflow/pseudo_labels.h"

namespace newscls {
namespace {

using testing::scratch_dir;
using testing::write_text;

Prediction vote(int label, std::vector<float> probs) {
  Prediction p;
  p.label = label;
  p.probs = std::move(probs);
  p.score = p.probs[static_cast<std::size_t>(label)];
  return p;
}

TEST(Feed, ReadsDistinctTitlesAndCountsWhatItSkips) {
  const std::string path =
      write_text(scratch_dir() + "/feed.txt", "\xEF\xBB\xBF央行降准\r\n\n央行降准\n  \n" +
                                                  std::string(kMaxFeedTitleBytes + 1, 'x') + "\n球队夺冠\n");
  const Feed feed = read_feed(path, {});
  EXPECT_EQ(feed.titles, (std::vector<std::string>{"央行降准", "球队夺冠"}));
  EXPECT_EQ(feed.lines, 6u);
  EXPECT_EQ(feed.blank, 2u);
  EXPECT_EQ(feed.duplicates, 1u);
  EXPECT_EQ(feed.too_long, 1u);
}

TEST(Feed, NeverReadsTheLabelAfterATab) {
  const std::string path = write_text(scratch_dir() + "/labelled.txt", "央行降准\t0\n球队夺冠\tsports\n");
  const Feed feed = read_feed(path, {});
  EXPECT_EQ(feed.titles, (std::vector<std::string>{"央行降准", "球队夺冠"}));
  EXPECT_EQ(feed.with_tab, 2u);
}

TEST(Feed, Sha256IsTheFilesForLfLines) {
  const std::string text = "一\n二\n三\n";
  const std::string path = write_text(scratch_dir() + "/feed.txt", text);
  EXPECT_EQ(read_feed(path, {}).sha256, sha256_hex(text));
}

TEST(Feed, RefusesAFeedWithoutUsableTitles) {
  const std::string path = write_text(scratch_dir() + "/empty.txt", "\n \n\t0\n");
  EXPECT_THROW(read_feed(path, {}), DataError);
}

TEST(Feed, NamesTheLineOfABinaryFile) {
  const std::string path = write_text(scratch_dir() + "/feed.bin", std::string("标题\n\xff\xfe\x00x\n", 12));
  try {
    read_feed(path, {});
    FAIL() << "a binary line was accepted";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(":2"), std::string::npos) << e.what();
  }
  FeedOptions skip;
  skip.skip_bad_lines = true;
  const Feed feed = read_feed(path, skip);
  EXPECT_EQ(feed.titles.size(), 1u);
  EXPECT_EQ(feed.bad, 1u);
}

TEST(Feed, SamplesALargeFeedDeterministically) {
  std::string text;
  for (int i = 0; i < 500; ++i) text += "标题" + std::to_string(i) + "\n";
  const std::string path = write_text(scratch_dir() + "/feed.txt", text);
  FeedOptions o;
  o.max_titles = 50;
  o.seed = 3;
  const Feed a = read_feed(path, o), b = read_feed(path, o);
  EXPECT_EQ(a.titles.size(), 50u);
  EXPECT_EQ(a.sampled_out, 450u);
  EXPECT_EQ(a.titles, b.titles);
  o.seed = 4;
  EXPECT_NE(read_feed(path, o).titles, a.titles);
}

TEST(PseudoLabels, KeepsConfidentAgreedTitles) {
  const std::vector<std::vector<Prediction>> votes = {
      {vote(0, {0.95f, 0.05f}), vote(1, {0.2f, 0.8f}), vote(1, {0.01f, 0.99f}), vote(0, {0.97f, 0.03f})},
      {vote(0, {0.93f, 0.07f}), vote(1, {0.1f, 0.9f}), vote(1, {0.05f, 0.95f}), vote(1, {0.4f, 0.6f})}};
  const PseudoLabels p = select_pseudo_labels(votes, {0.5, 0.5}, {0.9, 10.0});
  EXPECT_EQ(p.rows, (std::vector<std::size_t>{0, 2}));
  EXPECT_EQ(p.labels, (std::vector<int>{0, 1}));
  EXPECT_EQ(p.disagreed, 1u);
  EXPECT_EQ(p.candidates, 2u);
}

TEST(PseudoLabels, CapsAClassNearItsLabelledShare) {
  // Eight confident titles of class 0, two of class 1, equal labelled shares: with tolerance
  // 1.2, class 0 keeps ceil(1.2 x 0.5 x 10) = 6 of its eight.
  std::vector<Prediction> model;
  for (int i = 0; i < 8; ++i) model.push_back(vote(0, {0.99f - 0.001f * static_cast<float>(i), 0.0f}));
  for (int i = 0; i < 2; ++i) model.push_back(vote(1, {0.0f, 0.99f}));
  const PseudoLabels p = select_pseudo_labels({model}, {0.5, 0.5}, {0.9, 1.2});
  EXPECT_EQ(p.per_class, (std::vector<std::size_t>{6, 2}));
  // The most confident six of class 0 are rows 0..5.
  EXPECT_EQ(p.rows, (std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 8, 9}));
}

TEST(PseudoLabels, ChangeIsTheLargerShareMissing) {
  PseudoLabels a, b;
  a.rows = {1, 2, 3, 4};
  a.labels = {0, 0, 1, 1};
  b.rows = {1, 2, 3};
  b.labels = {0, 1, 1};
  EXPECT_DOUBLE_EQ(pseudo_label_change(a, b), 0.5);  // rows 2 (relabelled) and 4 (dropped) of a's four
  EXPECT_DOUBLE_EQ(pseudo_label_change(a, a), 0.0);
}

TEST(PseudoLabels, ClassShares) { EXPECT_EQ(class_shares({0, 0, 1, 2}, 3), (std::vector<double>{0.5, 0.25, 0.25})); }

}  // namespace
}  // namespace newscls
