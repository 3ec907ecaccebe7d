// The reply parser: exact names, normalised names, chatter, JSON mode, and no guessing.
#include <gtest/gtest.h>

#include "llm/label_names.h"
#include "llm/reply_parser.h"
#include "newscls/core/metrics.h"

namespace newscls::llm {
namespace {

class ReplyParserTest : public ::testing::Test {
 protected:
  LabelSet labels{{"finance", "realty", "stocks", "education", "science", "society", "politics", "sports", "game",
                   "entertainment"}};
  std::vector<LabelName> names = label_names_for(labels);
  int parse(const std::string& reply, bool json_mode = false) { return parse_reply(reply, names, json_mode); }
};

TEST_F(ReplyParserTest, ChineseNamesAreBuiltIn) {
  EXPECT_EQ(names[0].zh, "财经");
  EXPECT_EQ(names[6].zh, "时政");
  EXPECT_EQ(names[9].zh, "娱乐");
}

TEST_F(ReplyParserTest, ExactNames) {
  EXPECT_EQ(parse("体育"), 7);
  EXPECT_EQ(parse("sports"), 7);
  EXPECT_EQ(parse("  财经\n"), 0);
  EXPECT_EQ(parse("entertainment"), 9);
}

TEST_F(ReplyParserTest, NormalisedNames) {
  EXPECT_EQ(parse("Sports."), 7);
  EXPECT_EQ(parse("ＳＰＯＲＴＳ"), 7);
  EXPECT_EQ(parse("【体育】"), 7);
  EXPECT_EQ(parse("\"Game\""), 8);
  EXPECT_EQ(parse("Real Estate"), 1);
  EXPECT_EQ(parse("房地产。"), 1);
}

TEST_F(ReplyParserTest, ChatterAroundOneClass) {
  EXPECT_EQ(parse("好的，这条新闻标题属于「体育」类。"), 7);
  EXPECT_EQ(parse("Sure! The category of this headline is: Entertainment."), 9);
  EXPECT_EQ(parse("类别：sports"), 7);
  EXPECT_EQ(parse("答案是时政"), 6);
}

TEST_F(ReplyParserTest, NeverGuesses) {
  EXPECT_EQ(parse(""), kUnknownLabel);
  EXPECT_EQ(parse("   "), kUnknownLabel);
  EXPECT_EQ(parse("我不确定。"), kUnknownLabel);
  EXPECT_EQ(parse("It is either sports or entertainment."), kUnknownLabel);
  EXPECT_EQ(parse("不是体育，是娱乐"), kUnknownLabel);
  EXPECT_EQ(parse("weather"), kUnknownLabel);
  EXPECT_EQ(parse(std::string("\xff\xfe")), kUnknownLabel);
}

TEST_F(ReplyParserTest, EnglishNamesMatchWholeWordsOnly) {
  EXPECT_EQ(parse("sportsmanship"), kUnknownLabel);
  EXPECT_EQ(parse("endgame"), kUnknownLabel);
  EXPECT_EQ(parse("games"), 8);
}

TEST_F(ReplyParserTest, JsonModeReadsTheLabelField) {
  EXPECT_EQ(parse("{\"label\": \"sports\"}", true), 7);
  EXPECT_EQ(parse("```json\n{\"label\": \"体育\"}\n```", true), 7);
  EXPECT_EQ(parse("{\"category\": \"Finance\"}", true), 0);
  EXPECT_EQ(parse("{\"label\": \"unknown\"}", true), kUnknownLabel);
  EXPECT_EQ(parse("{\"label\": \"sports\", \"note\": \"not game\"}", true), 7);
  EXPECT_EQ(parse("体育", true), 7);
  EXPECT_EQ(parse("{broken", true), kUnknownLabel);
}

TEST_F(ReplyParserTest, ClassesWithoutChineseNamesStillParse) {
  std::vector<LabelName> custom = label_names_for(LabelSet{{"weather", "traffic"}});
  EXPECT_TRUE(custom[0].zh.empty());
  EXPECT_EQ(parse_reply("Traffic.", custom, false), 1);
  EXPECT_EQ(parse_reply("体育", custom, false), kUnknownLabel);
}

}  // namespace
}  // namespace newscls::llm
