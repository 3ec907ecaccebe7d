// The cascade's threshold choice on hand-made dev answers.
#include <gtest/gtest.h>

#include "cascade/cascade.h"
#include "newscls/error.h"

namespace newscls::cascade {
namespace {

// Member 0 is right when sure (score >= 0.8) and wrong otherwise; member 1 is always right.
MemberAnswers cheap() { return {{0.95f, 0.9f, 0.85f, 0.8f, 0.5f, 0.4f, 0.3f, 0.2f, 0.6f, 0.99f}, {1, 1, 1, 1, 0, 0, 0, 0, 0, 1}}; }
MemberAnswers costly() { return {{0.7f, 0.7f, 0.7f, 0.7f, 0.7f, 0.7f, 0.7f, 0.7f, 0.7f, 0.7f}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1}}; }

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

}  // namespace
}  // namespace newscls::cascade
