#include <gtest/gtest.h>

#include "newscls/core/metrics.h"
#include "newscls/core/utf8.h"

namespace newscls {
namespace {

// Hand-computed case, 3 classes, 8 titles, one unknown reply:
// truth     0 0 0 1 1 2 2 2
// predicted 0 0 1 1 2 2 2 -1
// class 0: tp 2, predicted 2, actual 3 -> P 1, R 2/3, F1 0.8
// class 1: tp 1, predicted 2, actual 2 -> P 0.5, R 0.5, F1 0.5
// class 2: tp 2, predicted 3, actual 3 -> P 2/3, R 2/3, F1 2/3
TEST(Metrics, HandComputedCaseWithUnknown) {
  const LabelSet labels{{"a", "b", "c"}};
  const Metrics m = compute_metrics({0, 0, 0, 1, 1, 2, 2, 2}, {0, 0, 1, 1, 2, 2, 2, kUnknownLabel}, labels);
  EXPECT_EQ(m.count, 8u);
  EXPECT_DOUBLE_EQ(m.accuracy, 5.0 / 8.0);
  EXPECT_EQ(m.unknown, 1u);
  EXPECT_DOUBLE_EQ(m.per_class[0].precision, 1.0);
  EXPECT_DOUBLE_EQ(m.per_class[0].recall, 2.0 / 3.0);
  EXPECT_NEAR(m.per_class[0].f1, 0.8, 1e-12);
  EXPECT_DOUBLE_EQ(m.per_class[1].f1, 0.5);
  EXPECT_NEAR(m.per_class[2].f1, 2.0 / 3.0, 1e-12);
  EXPECT_EQ(m.per_class[2].support, 3u);
  EXPECT_NEAR(m.macro_f1, (0.8 + 0.5 + 2.0 / 3.0) / 3.0, 1e-12);
  EXPECT_NEAR(m.macro_precision, (1.0 + 0.5 + 2.0 / 3.0) / 3.0, 1e-12);
  const std::vector<std::vector<std::size_t>> confusion = {{2, 1, 0, 0}, {0, 1, 1, 0}, {0, 0, 2, 1}};
  EXPECT_EQ(m.confusion, confusion);
}

// Class c occurs in neither truth nor predictions: it is left out of the macro averages (as
// scikit-learn's default); b, predicted but never true, counts with F1 0.
TEST(Metrics, MacroAveragesSkipClassesAbsentFromTruthAndPredictions) {
  const LabelSet labels{{"a", "b", "c"}};
  const Metrics m = compute_metrics({0, 0, 0}, {0, 0, 1}, labels);
  EXPECT_EQ(m.macro_classes, 2);
  EXPECT_NEAR(m.macro_f1, (0.8 + 0.0) / 2.0, 1e-12);
  EXPECT_NEAR(m.macro_recall, (2.0 / 3.0 + 0.0) / 2.0, 1e-12);
  EXPECT_NE(format_metrics_table(m).find("(over the 2 classes present)"), std::string::npos);
  EXPECT_EQ(to_json(m)["macro_classes"].get<int>(), 2);
}

TEST(Metrics, JsonAndTableCarryTheNumbers) {
  const LabelSet labels{{"体育", "b"}};
  const Metrics m = compute_metrics({0, 1}, {0, 0}, labels);
  const nlohmann::json j = to_json(m);
  EXPECT_DOUBLE_EQ(j["accuracy"].get<double>(), 0.5);
  EXPECT_EQ(j["per_class"]["体育"]["support"].get<int>(), 1);
  EXPECT_EQ(j["confusion"]["columns"].back(), "unknown");
  const std::string table = format_metrics_table(m);
  EXPECT_NE(table.find("accuracy 0.5000"), std::string::npos);
  EXPECT_NE(table.find("体育"), std::string::npos);
}

// The confusion matrix's column heads are cut to 6 columns by whole characters: a cut by bytes
// split "x娱乐新闻" inside a character and the table was no longer UTF-8.
TEST(Metrics, TableColumnHeadsCutByWholeCharacters) {
  const LabelSet labels{{"x娱乐新闻", "b"}};
  const std::string table = format_metrics_table(compute_metrics({0, 1}, {0, 1}, labels));
  EXPECT_TRUE(is_valid_utf8(table));
  EXPECT_NE(table.find("x娱乐  "), std::string::npos);
}

TEST(Metrics, ClassNeverPredictedHasZeroPrecisionNotNan) {
  const Metrics m = compute_metrics({0, 1}, {0, 0}, LabelSet{{"a", "b"}});
  EXPECT_EQ(m.per_class[1].precision, 0.0);
  EXPECT_EQ(m.per_class[1].f1, 0.0);
}

}  // namespace
}  // namespace newscls
