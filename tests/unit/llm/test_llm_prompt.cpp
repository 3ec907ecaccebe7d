// The prompt: exact label set, answer instruction, fixed prefix, seeded few-shot draw.
#include <gtest/gtest.h>

#include "llm/label_names.h"
#include "llm/prompt.h"

namespace newscls::llm {
namespace {

LabelSet thucnews_labels() {
  return {{"finance", "realty", "stocks", "education", "science", "society", "politics", "sports", "game",
           "entertainment"}};
}

Dataset small_train() {
  Dataset d;
  for (int i = 0; i < 60; ++i) {
    d.titles.push_back("title " + std::to_string(i));
    d.labels.push_back(i % 3);
  }
  return d;
}

TEST(LlmPrompt, SystemPrefixListsEveryLabelInBothLanguages) {
  const auto names = label_names_for(thucnews_labels());
  const std::string system = system_prompt(names, false);
  for (const LabelName& name : names) {
    EXPECT_NE(system.find("- " + name.zh + " (" + name.en + ")\n"), std::string::npos) << name.en;
  }
  EXPECT_NE(system.find("exactly one category"), std::string::npos);
  EXPECT_NE(system.find("category name only"), std::string::npos);
  EXPECT_NE(system_prompt(names, true).find("JSON"), std::string::npos);
}

TEST(LlmPrompt, TitleIsTheLastUserMessageAfterAFixedPrefix) {
  const Prompt p = Prompt::build(label_names_for(thucnews_labels()), false, {});
  const auto a = p.messages("标题一");
  const auto b = p.messages("标题二");
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0], b[0]);
  EXPECT_EQ(a[0]["role"], "system");
  EXPECT_EQ(a[1]["role"], "user");
  EXPECT_EQ(a[1]["content"], "标题一");
  EXPECT_EQ(p.version(), kPromptVersion);
}

TEST(LlmPrompt, FewShotDrawIsSeededStratifiedAndInterleaved) {
  const Dataset train = small_train();
  const auto first = draw_few_shot(train, 3, 2, 7);
  ASSERT_EQ(first.size(), 6u);
  for (std::size_t i = 0; i < first.size(); ++i) EXPECT_EQ(first[i].label, static_cast<int>(i % 3));
  const auto again = draw_few_shot(train, 3, 2, 7);
  const auto other = draw_few_shot(train, 3, 2, 8);
  bool same = true, differs = false;
  for (std::size_t i = 0; i < first.size(); ++i) {
    same = same && first[i].title == again[i].title;
    differs = differs || first[i].title != other[i].title;
  }
  EXPECT_TRUE(same);
  EXPECT_TRUE(differs);
}

TEST(LlmPrompt, FewShotTurnsPrecedeTheTitle) {
  const LabelSet labels{{"finance", "realty", "stocks"}};
  const Prompt p = Prompt::build(label_names_for(labels), false, draw_few_shot(small_train(), 3, 1, 1));
  const auto m = p.messages("x");
  ASSERT_EQ(m.size(), 1u + 2u * 3u + 1u);
  EXPECT_EQ(m[1]["role"], "user");
  EXPECT_EQ(m[2]["role"], "assistant");
  EXPECT_EQ(m[2]["content"], "财经");
  EXPECT_EQ(m[4]["content"], "房产");
  EXPECT_EQ(m.back()["content"], "x");
}

// The response cache keys on the request body, so these must show in the messages.
TEST(LlmPrompt, MessagesChangeWithFewShotAndJsonMode) {
  const auto names = label_names_for(thucnews_labels());
  const Prompt plain = Prompt::build(names, false, {});
  EXPECT_EQ(plain.messages("t"), Prompt::build(names, false, {}).messages("t"));
  EXPECT_NE(plain.messages("t"), Prompt::build(names, true, {}).messages("t"));
  EXPECT_NE(plain.messages("t"), Prompt::build(names, false, {{"t", 1}}).messages("t"));
}

TEST(LlmPrompt, JsonModeFewShotAnswersAreJson) {
  const Prompt p = Prompt::build(label_names_for(thucnews_labels()), true, {{"t", 7}});
  EXPECT_EQ(p.messages("x")[2]["content"], "{\"label\":\"sports\"}");
}

}  // namespace
}  // namespace newscls::llm
