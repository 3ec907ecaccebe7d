// `newscls ask`'s parts: which titles the active and random strategies pick
// (workflow/ask_selection) and how answer files are read back (workflow/answers_file).
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include <gtest/gtest.h>

#include "newscls/core/error.h"
#include "newscls/workflow/ask_workflow.h"
#include "test_support.h"
#include "workflow/answers_file.h"
#include "workflow/ask_selection.h"

namespace newscls {
namespace {

using testing::scratch_dir;
using testing::write_text;

TEST(AskSelection, BoundaryScoreFavoursTwoClassDoubtOverFlatOrSure) {
  const double torn = boundary_score({0.5f, 0.45f, 0.05f});
  const double sure = boundary_score({0.98f, 0.01f, 0.01f});
  const double flat = boundary_score({0.2f, 0.15f, 0.15f, 0.15f, 0.15f, 0.2f});
  EXPECT_NEAR(torn, 0.95 * 0.95, 1e-6);
  EXPECT_GT(torn, flat);
  EXPECT_GT(flat, sure);
  EXPECT_EQ(boundary_score({}), 0);
}

TEST(AskSelection, BigramOverlap) {
  EXPECT_DOUBLE_EQ(bigram_overlap("央行宣布降准", "央行宣布降准"), 1);
  EXPECT_GE(bigram_overlap("央行宣布降准一个百分点", "央行宣布降准半个百分点"), kNearDuplicate);
  EXPECT_LT(bigram_overlap("央行宣布降准", "湖人队击败勇士"), 0.1);
}

TEST(AskSelection, ActiveSpreadsOverPredictedClassesAndSkipsNearDuplicates) {
  // Class 0's titles are all more doubtful than class 1's; two of them are near-duplicates.
  const std::vector<std::string> titles = {"央行宣布降准一个百分点", "央行宣布降准半个百分点", "股市今天大涨三百点",
                                           "湖人队击败勇士",         "国足无缘世界杯",         "姚明出任篮协主席"};
  const std::vector<std::vector<float>> probs = {{0.5f, 0.45f, 0.05f}, {0.5f, 0.44f, 0.06f}, {0.55f, 0.4f, 0.05f},
                                                 {0.1f, 0.8f, 0.1f},   {0.05f, 0.9f, 0.05f}, {0.02f, 0.97f, 0.01f}};
  const std::vector<AskPick> picks = pick_active(titles, probs, 4);
  ASSERT_EQ(picks.size(), 4u);
  std::multiset<int> classes;
  std::set<std::size_t> indices;
  for (const AskPick& p : picks) classes.insert(p.suggested), indices.insert(p.index);
  EXPECT_EQ(classes.count(0), 2u);  // two each, not four of the more doubtful class
  EXPECT_EQ(classes.count(1), 2u);
  EXPECT_EQ(indices, (std::set<std::size_t>{0, 2, 3, 4}));  // 1 is 0's near-duplicate; 5 the surest
  for (std::size_t k = 1; k < picks.size(); ++k) EXPECT_GE(picks[k - 1].score, picks[k].score);
}

TEST(AskSelection, ActiveSpendsTheBudgetOnNearDuplicatesWhenNothingElseIsLeft) {
  const std::vector<std::string> titles = {"央行宣布降准一个百分点", "央行宣布降准半个百分点"};
  const std::vector<std::vector<float>> probs = {{0.6f, 0.4f}, {0.6f, 0.4f}};
  EXPECT_EQ(pick_active(titles, probs, 2).size(), 2u);
}

TEST(AskSelection, RandomIsSeededDistinctAndScoredByTopProbability) {
  std::vector<std::vector<float>> probs(100, {0.3f, 0.7f});
  const std::vector<AskPick> a = pick_random(probs, 30, 5), b = pick_random(probs, 30, 5),
                             c = pick_random(probs, 30, 6);
  ASSERT_EQ(a.size(), 30u);
  std::set<std::size_t> distinct;
  for (std::size_t k = 0; k < a.size(); ++k) {
    EXPECT_EQ(a[k].index, b[k].index);
    EXPECT_EQ(a[k].suggested, 1);
    EXPECT_FLOAT_EQ(static_cast<float>(a[k].score), 0.7f);
    distinct.insert(a[k].index);
  }
  EXPECT_EQ(distinct.size(), 30u);
  bool differs = false;
  for (std::size_t k = 0; k < a.size(); ++k) differs |= a[k].index != c[k].index;
  EXPECT_TRUE(differs);
}

const LabelSet kLabels{{"finance", "sports"}};
const std::unordered_set<std::string> kFeed = {"央行宣布降准", "湖人队击败勇士", "今天天气很好", "汽车新品上市"};

TEST(AnswersFile, ReadsClassesNoneAndSkippedAndTheLastAnswerCounts) {
  const std::string dir = scratch_dir();
  const std::string first = write_text(dir + "/a.csv",
                                       "title,label,suggested,score\n央行宣布降准,finance,finance,0.9\n"
                                       "湖人队击败勇士,,sports,0.5\n今天天气很好,none,finance,0.4\n");
  const std::string second = write_text(dir + "/b.csv", "title,label\n湖人队击败勇士,sports\n央行宣布降准,none\n");
  const AnswerSet set = read_answer_files({first, second}, default_answer_format(), kLabels, kFeed);
  ASSERT_EQ(set.answers.size(), 3u);
  EXPECT_EQ(set.answers[0].label, kNoneAnswer);  // b.csv corrected it
  EXPECT_EQ(set.answers[1].label, 1);
  EXPECT_EQ(set.answers[2].label, kNoneAnswer);
  EXPECT_EQ(set.titles().size(), 3u);
  const nlohmann::json facts = set.facts(kLabels);
  EXPECT_EQ(facts["none"], 2);
  EXPECT_EQ(facts["classes"]["sports"], 1);
  EXPECT_EQ(facts["classes"]["finance"], 0);
  EXPECT_EQ(facts["files"].size(), 2u);
  EXPECT_EQ(facts["files"][0]["answered"], 2);
}

TEST(AnswersFile, SkippedTitlesAreRememberedButNotAnswers) {
  const std::string path = write_text(scratch_dir() + "/a.csv", "title,label\n湖人队击败勇士,\n");
  const AnswerSet set = read_answer_files({path}, default_answer_format(), kLabels, kFeed);
  EXPECT_EQ(set.count(kSkippedAnswer), 1u);
  EXPECT_EQ(set.titles().count("湖人队击败勇士"), 1u);
}

void expect_data_error(const std::string& path, const std::string& where, const std::string& what) {
  try {
    read_answer_files({path}, default_answer_format(), kLabels, kFeed);
    FAIL() << "no error for " << path;
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(where), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(AnswersFile, RefusesBadAnswersTitlesOutsideTheFeedAndEmptyFiles) {
  const std::string dir = scratch_dir();
  expect_data_error(write_text(dir + "/bad.csv", "title,label\n央行宣布降准,finance\n湖人队击败勇士,basketball\n"),
                    "bad.csv:3", "'basketball' is neither a class (finance, sports) nor none");
  expect_data_error(write_text(dir + "/other.csv", "title,label\n不在订阅里的标题,finance\n"), "other.csv:2",
                    "is not in the feed");
  expect_data_error(write_text(dir + "/rows.csv", "title,label\n"), "rows.csv", "holds no answer rows");
  expect_data_error(write_text(dir + "/empty.csv", ""), "empty.csv", "no header row");
  expect_data_error(write_text(dir + "/cols.csv", "text,answer\n央行宣布降准,finance\n"), "cols.csv", "title");
}

}  // namespace
}  // namespace newscls
