// `newscls audit`'s parts: confident learning on synthetic probabilities
// (workflow/confident_learning), the stratified folds (workflow/cross_validation) and the
// audit file as `train --exclude/--relabel` read it (workflow/audit_file, workflow/audit_edits).
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "newscls/core/error.h"
#include "test_support.h"
#include "workflow/audit_edits.h"
#include "workflow/audit_file.h"
#include "workflow/confident_learning.h"
#include "workflow/cross_validation.h"

namespace newscls {
namespace {

using testing::scratch_dir;
using testing::write_text;

// p on `top`, the rest spread evenly over the other classes.
std::vector<float> peaked(int classes, int top, float p) {
  std::vector<float> row(static_cast<std::size_t>(classes), (1 - p) / static_cast<float>(classes - 1));
  row[static_cast<std::size_t>(top)] = p;
  return row;
}

// 300 titles of 3 classes, the model right about each with p 0.8; the titles of `flips`
// labelled (true + 1) % 3 instead, with the model's p on the true class as given (above 0.8, so
// above that class's threshold).
struct Synthetic {
  std::vector<std::vector<float>> probs;
  std::vector<int> labels;
  std::set<std::size_t> flipped;
};

Synthetic synthetic(const std::vector<std::pair<std::size_t, float>>& flips) {
  Synthetic s;
  for (std::size_t r = 0; r < 300; ++r) {
    s.labels.push_back(static_cast<int>(r % 3));
    s.probs.push_back(peaked(3, s.labels.back(), 0.8f));
  }
  for (const auto& [row, p] : flips) {
    const int truth = s.labels[row];
    s.probs[row] = peaked(3, truth, p);
    s.labels[row] = (truth + 1) % 3;
    s.flipped.insert(row);
  }
  return s;
}

std::set<std::size_t> flagged_rows(const LabelAudit& a) {
  std::set<std::size_t> rows;
  for (const LabelIssue& issue : a.issues) rows.insert(issue.row);
  return rows;
}

TEST(ConfidentLearning, ThresholdIsTheMeanProbabilityOfEachClassOverTitlesGivenIt) {
  const std::vector<std::vector<float>> probs = {{0.9f, 0.1f, 0}, {0.5f, 0.5f, 0}, {0.2f, 0.8f, 0}, {}};
  const std::vector<int> labels = {0, 0, 1, 1};
  const std::vector<double> t = per_class_thresholds(probs, labels, 3);
  EXPECT_NEAR(t[0], 0.7, 1e-6);
  EXPECT_NEAR(t[1], 0.8, 1e-6);   // the title without probabilities is left out
  EXPECT_TRUE(std::isinf(t[2]));  // no title is labelled 2: none is ever confidently of it
}

TEST(ConfidentLearning, FindsEveryFlipWithEachFilterAndSuggestsTheTrueClass) {
  const Synthetic s = synthetic({{4, 0.9f}, {50, 0.85f}, {101, 0.95f}, {202, 0.82f}, {250, 0.9f}, {299, 0.88f}});
  for (const std::string& name : issue_filter_names()) {
    const LabelAudit a = find_label_issues(s.probs, s.labels, 3, issue_filter_named(name));
    EXPECT_EQ(flagged_rows(a), s.flipped) << name;
    for (const LabelIssue& issue : a.issues) {
      EXPECT_EQ(issue.suggested, static_cast<int>(issue.row % 3)) << name;
      EXPECT_EQ(issue.given, s.labels[issue.row]);
    }
    EXPECT_EQ(a.judged, 300u);
  }
}

TEST(ConfidentLearning, ConfidentJointCountsFlipsOffItsDiagonalAndCalibratesToTheTitles) {
  const Synthetic s = synthetic({{4, 0.9f}, {50, 0.85f}});  // rows 4 and 50: truth 1 and 2, given 2 and 0
  const LabelAudit a = find_label_issues(s.probs, s.labels, 3, IssueFilter::kNoiseRate);
  EXPECT_EQ(a.joint[2][1], 1u);
  EXPECT_EQ(a.joint[0][2], 1u);
  EXPECT_EQ(a.joint[1][0] + a.joint[1][2] + a.joint[0][1] + a.joint[2][0], 0u);
  double total = 0;
  for (const auto& row : a.calibrated)
    for (double v : row) total += v;
  EXPECT_NEAR(total, 300.0, 1e-6);
  EXPECT_NEAR(a.calibrated[2][1], 1.0, 1e-6);  // every title of given 2 is counted: 1 of 100 truly 1
}

TEST(ConfidentLearning, RanksTheMostConfidentlyWrongFirst) {
  const Synthetic s = synthetic({{10, 0.82f}, {20, 0.97f}, {30, 0.85f}});
  const LabelAudit a = find_label_issues(s.probs, s.labels, 3, IssueFilter::kJoint);
  ASSERT_EQ(a.issues.size(), 3u);
  EXPECT_EQ(a.issues[0].row, 20u);
  EXPECT_EQ(a.issues[1].row, 30u);
  EXPECT_EQ(a.issues[2].row, 10u);
  EXPECT_NEAR(a.issues[0].score, 1 - 0.015, 1e-6);  // 1 - p(given): the rest, 0.03, spread over two classes
  EXPECT_GT(a.issues[1].score, a.issues[2].score);
}

TEST(ConfidentLearning, NeverFlagsATitleTheModelWouldLabelAsGivenNorOneWithoutProbabilities) {
  Synthetic s = synthetic({{7, 0.9f}});
  s.probs[8] = {};
  // Class 0 is an unsure one (threshold about 0.35): row 1, given 1, is confidently of class 0
  // but still most probably of class 1, its given class: off the joint's diagonal, not flagged.
  for (std::size_t r = 0; r < 300; r += 3) s.probs[r] = {0.35f, 0.33f, 0.32f};
  s.probs[1] = {0.36f, 0.40f, 0.24f};
  const LabelAudit a = find_label_issues(s.probs, s.labels, 3, IssueFilter::kJoint);
  EXPECT_EQ(a.joint[1][0], 1u);
  EXPECT_EQ(flagged_rows(a), std::set<std::size_t>{7});
  EXPECT_EQ(a.judged, 299u);
}

TEST(ConfidentLearning, RefusesAnUnknownFilterName) { EXPECT_THROW(issue_filter_named("all"), UsageError); }

TEST(CrossValidation, FoldsAreStratifiedBalancedAndSeeded) {
  std::vector<int> labels;
  for (int r = 0; r < 103; ++r) labels.push_back(r % 7 == 0 ? 1 : 0);  // 15 of class 1, 88 of class 0
  const std::vector<int> folds = stratified_folds(labels, 2, 5, 42);
  std::vector<int> size(5, 0), ones(5, 0);
  for (std::size_t r = 0; r < labels.size(); ++r) {
    ++size[static_cast<std::size_t>(folds[r])];
    ones[static_cast<std::size_t>(folds[r])] += labels[r];
  }
  for (int f = 0; f < 5; ++f) {
    EXPECT_GE(size[static_cast<std::size_t>(f)], 20);
    EXPECT_LE(size[static_cast<std::size_t>(f)], 21);
    EXPECT_EQ(ones[static_cast<std::size_t>(f)], 3);
  }
  EXPECT_EQ(stratified_folds(labels, 2, 5, 42), folds);
  EXPECT_NE(stratified_folds(labels, 2, 5, 43), folds);
}

TEST(AuditFile, RoundTripsTitlesWithCommasQuotesAndSpaces) {
  const std::vector<AuditRow> rows = {{12, "央行, \"降准\"", "finance", "stocks", 0.97, 0},
                                      {3, " 球队夺冠\t", "game", "sports", 0.5, 0}};
  const std::string csv = audit_csv(rows);
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "line,title,given,suggested,score");
  EXPECT_NE(csv.find("12,\"央行, \"\"降准\"\"\",finance,stocks,0.970000\n"), std::string::npos);
  const std::vector<AuditRow> back = read_audit_file(write_text(scratch_dir() + "/audit.csv", csv));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].line, 12u);
  EXPECT_EQ(back[0].title, "央行, \"降准\"");
  EXPECT_EQ(back[1].title, " 球队夺冠 ");
  EXPECT_EQ(back[1].given, "game");
  EXPECT_EQ(back[1].suggested, "sports");
  EXPECT_EQ(back[1].file_line, 3u);
}

void expect_data_error(const std::string& path, const std::string& where, const std::string& what) {
  try {
    read_audit_file(path);
    FAIL() << "no error for " << path;
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(where), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(AuditFile, NamesTheLineOfABadRow) {
  const std::string dir = scratch_dir();
  expect_data_error(write_text(dir + "/a.csv", "title,label\nx,y\n"), "a.csv:1", "not an audit file");
  expect_data_error(write_text(dir + "/b.csv", "line,title,given,suggested,score\n2,x,a,b,1\nten,y,a,b,1\n"), "b.csv:3",
                    "not a line number");
  expect_data_error(write_text(dir + "/c.csv", "line,title,given,suggested,score\n2,x,a,b,1\n2,y,a,b,1\n"), "c.csv:3",
                    "listed twice");
}

struct Training {
  LabelSet labels{{"finance", "sports"}};
  Dataset train;
  Training() {
    train.path = "train.txt";
    train.titles = {"央行降准", "球队夺冠", "股市大涨", "联赛开幕"};
    train.labels = {0, 1, 1, 1};  // line 5 (股市大涨) is mislabelled
    train.line_numbers = {1, 2, 5, 6};
  }
};

TEST(AuditEdits, ExcludesOrRelabelsTheFlaggedLinesAndCountsThem) {
  const std::vector<AuditRow> flagged = {{5, "股市大涨", "sports", "finance", 0.9, 0}};
  const std::string csv = write_text(scratch_dir() + "/audit.csv", audit_csv(flagged));
  Training excluded;
  const nlohmann::json facts = apply_audit({csv, AuditUse::kExclude}, excluded.labels, excluded.train, nullptr);
  EXPECT_EQ(excluded.train.titles, (std::vector<std::string>{"央行降准", "球队夺冠", "联赛开幕"}));
  EXPECT_EQ(excluded.train.line_numbers, (std::vector<std::size_t>{1, 2, 6}));
  EXPECT_EQ(facts["excluded"], 1);
  EXPECT_EQ(facts["sha256"].get<std::string>().size(), 64u);
  Training relabelled;
  const nlohmann::json relabel = apply_audit({csv, AuditUse::kRelabel}, relabelled.labels, relabelled.train, nullptr);
  EXPECT_EQ(relabelled.train.labels, (std::vector<int>{0, 1, 0, 1}));
  EXPECT_EQ(relabel["relabelled"], 1);
  EXPECT_EQ(relabel["use"], "relabel");
}

TEST(AuditEdits, RefusesARowWhoseLineHoldsAnotherTitleOrNone) {
  const std::string dir = scratch_dir();
  Training t;
  const std::string other = write_text(dir + "/other.csv", audit_csv({{5, "央行降准", "sports", "finance", 0.9, 0}}));
  try {
    apply_audit({other, AuditUse::kExclude}, t.labels, t.train, nullptr);
    FAIL() << "a title that is not the line's was taken";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("other.csv:2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("train.txt:5"), std::string::npos) << e.what();
  }
  const std::string past = write_text(dir + "/past.csv", audit_csv({{9, "央行降准", "finance", "sports", 0.9, 0}}));
  EXPECT_THROW(apply_audit({past, AuditUse::kExclude}, t.labels, t.train, nullptr), DataError);
  const std::string given = write_text(dir + "/given.csv", audit_csv({{5, "股市大涨", "finance", "sports", 0.9, 0}}));
  EXPECT_THROW(apply_audit({given, AuditUse::kRelabel}, t.labels, t.train, nullptr), DataError);
}

}  // namespace
}  // namespace newscls
