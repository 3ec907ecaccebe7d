// Calibration figures on hand-made cases, and the temperature fit on synthetic data.
#include <cmath>
#include <random>
#include <utility>

#include <gtest/gtest.h>

#include "newscls/core/error.h"
#include "newscls/core/metrics.h"
#include "newscls/workflow/predict_output.h"
#include "workflow/calibration.h"

namespace newscls {
namespace {

// Two titles, two classes: p = (0.8, 0.2) true 0 (right), p = (0.6, 0.4) true 1 (wrong).
// Bins of 15: 0.8 -> bin 12, 0.6 -> bin 9; ECE = 0.5*|1-0.8| + 0.5*|0-0.6| = 0.4.
// NLL = -(ln 0.8 + ln 0.4)/2; Brier = ((0.2^2+0.2^2) + (0.6^2+0.6^2))/2 = 0.4.
TEST(Calibration, HandMadeEceNllBrier) {
  const CalibrationMetrics c = compute_calibration({0, 1}, {{0.8f, 0.2f}, {0.6f, 0.4f}});
  EXPECT_EQ(c.count, 2u);
  EXPECT_NEAR(c.ece, 0.4, 1e-6);
  EXPECT_NEAR(c.nll, -(std::log(0.8) + std::log(0.4)) / 2, 1e-6);
  EXPECT_NEAR(c.brier, 0.4, 1e-6);
  ASSERT_EQ(c.bins.size(), 15u);
  EXPECT_EQ(c.bins[12].count, 1u);
  EXPECT_NEAR(c.bins[12].accuracy, 1.0, 1e-12);
  EXPECT_EQ(c.bins[9].count, 1u);
  EXPECT_NEAR(c.bins[9].mean_confidence, 0.6, 1e-6);
}

TEST(Calibration, PerfectlyCalibratedBinHasNoError) {
  // Ten titles at confidence 0.7, seven right: ECE 0.
  std::vector<int> truth;
  std::vector<std::vector<float>> probs;
  for (int i = 0; i < 10; ++i) {
    truth.push_back(i < 7 ? 0 : 1);
    probs.push_back({0.7f, 0.3f});
  }
  EXPECT_NEAR(compute_calibration(truth, probs).ece, 0.0, 1e-6);
}

TEST(Calibration, UnknownAnswerCountsAsWrongAtFloor) {
  const CalibrationMetrics c = compute_calibration({0}, {{}});
  EXPECT_NEAR(c.nll, -std::log(kNllFloor), 1e-6);
  EXPECT_NEAR(c.brier, 1.0, 1e-12);
  EXPECT_NEAR(c.ece, 0.0, 1e-12);  // confidence 0, accuracy 0
}

TEST(Calibration, SelectiveAndRiskCoverage) {
  // scores 0.9 (right), 0.8 (wrong), 0.4 (right), 0.2 (wrong)
  const std::vector<int> truth{0, 0, 1, 1}, predicted{0, 1, 1, 0};
  const std::vector<float> scores{0.9f, 0.8f, 0.4f, 0.2f};
  const SelectiveMetrics s = compute_selective(truth, predicted, scores, 0.5);
  EXPECT_EQ(s.answered, 2u);
  EXPECT_DOUBLE_EQ(s.coverage, 0.5);
  EXPECT_DOUBLE_EQ(s.accuracy_answered, 0.5);
  const std::vector<CoveragePoint> curve = risk_coverage(truth, predicted, scores, 4);
  ASSERT_EQ(curve.size(), 4u);
  EXPECT_DOUBLE_EQ(curve[0].accuracy, 1.0);
  EXPECT_DOUBLE_EQ(curve[1].accuracy, 0.5);
  EXPECT_NEAR(curve[2].accuracy, 2.0 / 3.0, 1e-12);
  EXPECT_DOUBLE_EQ(curve[3].coverage, 1.0);
}

// Titles of one score cut by a coverage point count by their share, whatever their order in the
// file (the first points of fasttext's curve moved with the file's order: many titles share its
// highest calibrated score).
TEST(Calibration, RiskCoverageTiesDoNotDependOnOrder) {
  // 0.9 right; then four tied at 0.8, two right; the 2-of-5 point cuts the tie after one of them.
  const std::vector<int> truth{0, 0, 0, 0, 0};
  const std::vector<float> scores{0.9f, 0.8f, 0.8f, 0.8f, 0.8f};
  const std::vector<CoveragePoint> a = risk_coverage(truth, {0, 0, 0, 1, 1}, scores, 5);
  const std::vector<CoveragePoint> b = risk_coverage(truth, {0, 1, 1, 0, 0}, scores, 5);
  ASSERT_EQ(a.size(), 5u);
  ASSERT_EQ(b.size(), 5u);
  for (std::size_t k = 0; k < a.size(); ++k) EXPECT_DOUBLE_EQ(a[k].accuracy, b[k].accuracy) << k;
  EXPECT_DOUBLE_EQ(a[0].accuracy, 1.0);
  EXPECT_DOUBLE_EQ(a[1].accuracy, 1.5 / 2);  // the one above, and half a right one of the four
  EXPECT_DOUBLE_EQ(a[4].accuracy, 3.0 / 5);
}

// A reply naming no class is not an answer, even at a minimum score of 0 (it was counted as
// answered and wrong, and written as the label "unknown" with abstained false).
TEST(Calibration, UnknownAnswerIsNeverAnswered) {
  const SelectiveMetrics s = compute_selective({0, 1}, {0, kUnknownLabel}, {0.9f, 0.0f}, 0.0);
  EXPECT_EQ(s.answered, 1u);
  EXPECT_DOUBLE_EQ(s.accuracy_answered, 1.0);
  // Nor on the risk-coverage curve: it ends at the share given a class, not at 1 with an error.
  const std::vector<CoveragePoint> curve = risk_coverage({0, 1}, {0, kUnknownLabel}, {0.9f, 0.0f}, 2);
  ASSERT_EQ(curve.size(), 2u);
  EXPECT_DOUBLE_EQ(curve.back().coverage, 0.5);
  EXPECT_DOUBLE_EQ(curve.back().accuracy, 1.0);
  PredictionFormatter f({"a", "b"}, PredictionFormat::kJsonl, 0);
  f.set_min_score(0.0);
  Prediction unknown;
  std::string out;
  f.append(out, "t", unknown);
  EXPECT_EQ(out, "{\"title\":\"t\",\"label\":null,\"label_id\":-1,\"score\":0,\"abstained\":true,\"top_k\":[]}\n");
}

// Titles drawn from a known model: true logits z, label ~ softmax(z); the classifier reports
// softmax(z * 3), i.e. temperature 1/3. The fit must find T close to 3 and lower the NLL.
TEST(Calibration, TemperatureFitRecoversKnownTemperature) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal(0.0, 1.5);
  std::vector<int> truth;
  std::vector<std::vector<float>> probs;
  for (int i = 0; i < 20000; ++i) {
    std::vector<double> z(5);
    for (double& v : z) v = normal(rng);
    std::vector<double> p(5), q(5);
    double zp = 0, zq = 0;
    for (int k = 0; k < 5; ++k) zp += p[k] = std::exp(z[k]), zq += q[k] = std::exp(3 * z[k]);
    std::discrete_distribution<int> draw(p.begin(), p.end());
    truth.push_back(draw(rng));
    std::vector<float> reported(5);
    for (int k = 0; k < 5; ++k) reported[k] = static_cast<float>(q[k] / zq);
    probs.push_back(reported);
  }
  const Temperature t = fit_temperature(truth, probs);
  EXPECT_NEAR(t.temperature, 3.0, 0.15);
  EXPECT_LT(temperature_nll(truth, probs, t), temperature_nll(truth, probs, {}));
  for (auto& row : probs) apply_temperature(row, t);
  EXPECT_LT(compute_calibration(truth, probs).ece, 0.02);
}

// Vote shares with exact zeros (a forest): right 80% of the time with all votes on one class.
// The floor lets the fit give the wrong 20% some probability: NLL finite, top score near 0.8.
TEST(Calibration, FloorHandlesExactZeros) {
  std::vector<int> truth;
  std::vector<std::vector<float>> probs;
  for (int i = 0; i < 100; ++i) {
    truth.push_back(i % 5 == 0 ? 1 : 0);
    probs.push_back({1.0f, 0.0f, 0.0f});
  }
  const Temperature t = fit_temperature(truth, probs);
  EXPECT_GT(t.floor, 1e-12);
  EXPECT_LT(temperature_nll(truth, probs, t), 5.0);
  std::vector<float> p{1.0f, 0.0f, 0.0f};
  apply_temperature(p, t);
  EXPECT_NEAR(p[0], 0.8, 0.05);
}

TEST(Calibration, ApplyKeepsOrderAndSumsToOne) {
  std::vector<float> p{0.7f, 0.2f, 0.1f, 0.0f};
  apply_temperature(p, {2.0, 1e-4});
  double sum = 0;
  for (float v : p) sum += v;
  EXPECT_NEAR(sum, 1.0, 1e-5);
  EXPECT_GT(p[0], p[1]);
  EXPECT_GT(p[2], p[3]);
  EXPECT_LT(p[0], 0.7f);  // T > 1 softens
}

TEST(Calibration, WorkflowKeyIsRecognisedAndChecked) {
  EXPECT_TRUE(is_workflow_override("calibrate=false"));
  EXPECT_FALSE(is_workflow_override("calibrated=false"));
  EXPECT_EQ(calibrate_setting({"epochs=3"}), CalibrateSetting::kAuto);
  EXPECT_EQ(calibrate_setting({"calibrate=false"}), CalibrateSetting::kOff);
  EXPECT_EQ(calibrate_setting({"calibrate=true"}), CalibrateSetting::kOn);
  EXPECT_THROW(calibrate_setting({"calibrate=maybe"}), ConfigError);
}

TEST(Calibration, FormatterAbstainsBelowMinScore) {
  PredictionFormatter f({"a", "b"}, PredictionFormat::kJsonl, 1);
  f.set_min_score(0.5);
  Prediction low = prediction_from_probs({0.4f, 0.35f});
  Prediction high = prediction_from_probs({0.1f, 0.9f});
  high.stage = 1;
  f.set_stage_names({"first", "second"});
  std::string out;
  f.append(out, "t1", low);
  f.append(out, "t2", high);
  EXPECT_EQ(out,
            "{\"title\":\"t1\",\"label\":null,\"label_id\":-1,\"score\":0.4,\"abstained\":true,"
            "\"top_k\":[{\"label\":\"a\",\"score\":0.4}]}\n"
            "{\"title\":\"t2\",\"label\":\"b\",\"label_id\":1,\"score\":0.9,\"abstained\":false,\"stage\":\"second\","
            "\"top_k\":[{\"label\":\"b\",\"score\":0.9}]}\n");
  PredictionFormatter tsv({"a", "b"}, PredictionFormat::kTsv, 1);
  tsv.set_min_score(0.5);
  out.clear();
  tsv.append(out, "t1", low);
  EXPECT_EQ(out, "t1\t\t0.4\n");
}

TEST(Calibration, AScorePrintedAsTheMinScoreIsAnswered) {
  // 0.99999994 prints as 1: at --min-score 1 it was shown as "score":1 and abstained.
  PredictionFormatter f({"a", "b"}, PredictionFormat::kTsv, 1);
  f.set_min_score(1.0);
  Prediction p = prediction_from_probs({0.99999994f, 0.00000006f});
  std::string out;
  f.append(out, "t", p);
  EXPECT_EQ(out, "t\ta\t1\n");
  EXPECT_EQ(compute_selective({0}, {0}, {0.99999994f}, 1.0).answered, 1u);
  EXPECT_EQ(compute_selective({0}, {0}, {0.9999f}, 1.0).answered, 0u);
  // The float 0.9f is below the double 0.9 the user typed, yet prints as 0.9.
  const std::pair<float, double> shown_at_bar[] = {{0.9f, 0.9}, {0.95f, 0.95}, {0.7f, 0.7}};
  for (const auto& [score, bar] : shown_at_bar)
    EXPECT_EQ(compute_selective({0}, {0}, {score}, bar).answered, 1u) << bar;
  EXPECT_TRUE(below_min_score(std::nanf(""), 0.0));
}

TEST(Calibration, ANanScoreIsNullInJson) {
  PredictionFormatter f({"a", "b"}, PredictionFormat::kJsonl, 1);
  Prediction p = prediction_from_probs({0.5f, 0.5f});
  p.score = std::nanf("");
  std::string out;
  f.append(out, "t", p);
  EXPECT_NE(out.find("\"score\":null"), std::string::npos) << out;
  EXPECT_EQ(compute_calibration({0}, {{std::nanf(""), 0.1f}}).count, 1u);  // no crash: a bin for NaN
}

}  // namespace
}  // namespace newscls
