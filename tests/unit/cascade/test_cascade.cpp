// The cascade's threshold choice on hand-made dev answers.
#include <gtest/gtest.h>

#include "cascade/cascade.h"
#include "cascade/settings.h"
#include "config_table_checks.h"
#include "newscls/core/error.h"

namespace newscls::cascade {
namespace {

// Member 0 is right when sure (score >= 0.8) and wrong otherwise; member 1 is always right.
MemberAnswers cheap() {
  return {{0.95f, 0.9f, 0.85f, 0.8f, 0.5f, 0.4f, 0.3f, 0.2f, 0.6f, 0.99f}, {1, 1, 1, 1, 0, 0, 0, 0, 0, 1}};
}
MemberAnswers costly() {
  return {{0.7f, 0.7f, 0.7f, 0.7f, 0.7f, 0.7f, 0.7f, 0.7f, 0.7f, 0.7f}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1}};
}

TEST(CascadeSettings, EachKeyOfTheTableHolds) { testing::expect_table_holds(settings_table(), parse_settings); }

TEST(Cascade, BestAccuracySendsOnlyTheUnsureTitles) {
  const ThresholdChoice c = choose_thresholds({cheap(), costly()}, 1.0, 20);
  EXPECT_EQ(c.correct, 10u);
  ASSERT_EQ(c.answered.size(), 2u);
  EXPECT_EQ(c.answered[0], 5u);  // the five sure ones; fewest sent on among the perfect choices
  EXPECT_EQ(c.answered[1], 5u);
  EXPECT_FLOAT_EQ(static_cast<float>(c.thresholds[0]), 0.8f);  // the only candidate in (0.6, 0.8]
}

TEST(Cascade, LastShareCapsTheTitlesReachingTheLastMember) {
  const ThresholdChoice c = choose_thresholds({cheap(), costly()}, 0.3, 20);
  EXPECT_LE(c.answered[1], 3u);
  EXPECT_EQ(c.correct, 5u + c.answered[1]);  // each title sent on is one more right
}

TEST(Cascade, ThreeMembersAndBadInput) {
  const ThresholdChoice c = choose_thresholds({cheap(), cheap(), costly()}, 1.0, 20);
  EXPECT_EQ(c.correct, 10u);
  EXPECT_EQ(c.thresholds.size(), 2u);
  EXPECT_THROW(choose_thresholds({cheap()}, 1.0), UsageError);
  MemberAnswers short_one{{0.5f}, {1}};
  EXPECT_THROW(choose_thresholds({cheap(), short_one}, 1.0), Error);
}

TEST(Cascade, AnUnreachableLastShareNamesTheSmallestReachable) {
  // Three "unknown" answers (score -1) always go on: 0.3 of the titles reach the last member.
  MemberAnswers unsure = cheap();
  for (int i : {4, 5, 6}) unsure.scores[i] = -1.0f;
  try {
    choose_thresholds({unsure, costly()}, 0.1, 20);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("smallest share of dev titles that reach the last member, 0.3000"),
              std::string::npos)
        << e.what();
  }
}

TEST(Cascade, SlackTradesAccuracyForFewerTitlesSentOn) {
  // Within 0.3 of the best (10 of 10 right): at most 3 fewer right, so the first member may
  // keep up to 3 of its 5 unsure titles; it keeps the 3 surest ones (0.6, 0.5, 0.4).
  const ThresholdChoice c = choose_thresholds({cheap(), costly()}, 1.0, 20, 0.3);
  EXPECT_EQ(c.correct, 7u);
  EXPECT_EQ(c.answered[1], 2u);
  const ThresholdChoice none = choose_thresholds({cheap(), costly()}, 1.0, 20, 1.0);
  EXPECT_EQ(none.answered[1], 0u);  // any accuracy will do: nothing sent on
}

TEST(Cascade, UnknownAnswersAreAlwaysSentOn) {
  // Member 0 gave no answer (score -1) for 4 titles; even "answer everything" sends them on.
  MemberAnswers unsure{{-1.0f, -1.0f, -1.0f, -1.0f, 0.9f, 0.9f}, {0, 0, 0, 0, 1, 1}};
  MemberAnswers last{{0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f}, {1, 1, 1, 1, 0, 0}};
  const ThresholdChoice c = choose_thresholds({unsure, last}, 1.0, 20, 1.0);  // any accuracy: fewest sent on
  EXPECT_EQ(c.answered[1], 4u);
  EXPECT_EQ(c.correct, 6u);
}

TEST(Cascade, MiddleMemberThresholdsComeFromTheTitlesItSees) {
  // 390 titles member 0 is sure of; 10 it is not, where member 1 scores 0.40..0.49 and is right
  // from 0.45 up. Quantiles over all 400 titles give member 1 no candidate near 0.45.
  MemberAnswers first, middle, last;
  for (int i = 0; i < 400; ++i) {
    const bool sure = i < 390;
    first.scores.push_back(sure ? 0.95f : 0.3f);
    first.correct.push_back(sure);
    middle.scores.push_back(sure ? 0.99f : 0.40f + 0.01f * static_cast<float>(i - 390));
    middle.correct.push_back(sure || i >= 395);
    last.scores.push_back(0.5f);
    last.correct.push_back(1);
  }
  const ThresholdChoice c = choose_thresholds({first, middle, last}, 1.0, 20);
  EXPECT_EQ(c.correct, 400u);
  EXPECT_EQ(c.answered[1], 5u);  // the middle member keeps its five sure ones
  EXPECT_EQ(c.answered[2], 5u);
}

TEST(Cascade, ProductOfProbabilities) {
  std::vector<float> joint;
  multiply_into(joint, {0.5f, 0.4f, 0.1f});  // the first member: its own probabilities
  EXPECT_FLOAT_EQ(joint[1], 0.4f);
  multiply_into(joint, {0.1f, 0.3f, 0.6f});  // 0.05, 0.12, 0.06: the second class wins
  EXPECT_NEAR(joint[0], 0.05f / 0.23f, 1e-6);
  EXPECT_NEAR(joint[1], 0.12f / 0.23f, 1e-6);
  multiply_into(joint, {});  // an unknown answer changes nothing
  EXPECT_NEAR(joint[1], 0.12f / 0.23f, 1e-6);
  multiply_into(joint, {0.0f, 0.0f, 1.0f});
  EXPECT_FLOAT_EQ(joint[2], 1.0f);
  multiply_into(joint, {1.0f, 0.0f, 0.0f});  // nothing left in common: the later member wins
  EXPECT_FLOAT_EQ(joint[0], 1.0f);
}

}  // namespace
}  // namespace newscls::cascade
