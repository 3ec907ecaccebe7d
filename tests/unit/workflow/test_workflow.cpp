#include <unistd.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "newscls/core/config.h"
#include "newscls/core/error.h"
#include "newscls/core/progress.h"
#include "newscls/workflow/predict_output.h"
#include "newscls/workflow/registry.h"
#include "test_support.h"

namespace newscls {
namespace {

const std::vector<std::string> kLabels = {"finance", "sports", "game"};

Prediction example() { return prediction_from_probs({0.2f, 0.7f, 0.1f}); }

// An llm run's last batch drew its line, and finish() logged the same line again.
TEST(Progress, TheLastLineIsLoggedOnce) {
  if (::isatty(STDERR_FILENO)) GTEST_SKIP() << "on a terminal the bar is redrawn, not logged";
  std::ostringstream log;
  const auto previous = spdlog::default_logger();
  spdlog::set_default_logger(
      std::make_shared<spdlog::logger>("progress", std::make_shared<spdlog::sinks::ostream_sink_st>(log)));
  {
    Progress bar("llm", 2, {0.0, 0.0});  // every advance draws
    bar.advance(1);
    bar.advance(1);
    bar.finish();
  }
  spdlog::set_default_logger(previous);
  std::istringstream lines(log.str());
  int final_lines = 0;
  for (std::string line; std::getline(lines, line);) final_lines += line.find("2/2") != std::string::npos;
  EXPECT_EQ(final_lines, 1) << log.str();
}

TEST(PredictionFromProbs, PicksTheFirstMaximum) {
  const Prediction p = prediction_from_probs({0.4f, 0.1f, 0.4f});
  EXPECT_EQ(p.label, 0);
  EXPECT_FLOAT_EQ(p.score, 0.4f);
  EXPECT_EQ(prediction_from_probs({}).label, kUnknownLabel);
}

TEST(PredictionFormatter, JsonlLineParsesWithTopKInOrder) {
  PredictionFormatter f(kLabels, PredictionFormat::kJsonl, 2);
  std::string out;
  f.append(out, "标题 \"quoted\"\t\x01", example());
  ASSERT_EQ(out.back(), '\n');
  const nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j["title"], "标题 \"quoted\"\t\x01");
  EXPECT_EQ(j["label"], "sports");
  EXPECT_EQ(j["label_id"], 1);
  EXPECT_NEAR(j["score"].get<double>(), 0.7, 1e-6);
  ASSERT_EQ(j["top_k"].size(), 2u);
  EXPECT_EQ(j["top_k"][0]["label"], "sports");
  EXPECT_EQ(j["top_k"][1]["label"], "finance");
}

// Tied classes come out by class id, lower first, as prediction_from_probs picks the label:
// top_k[0] is always the label (partial_sort alone leaves ties in any order).
TEST(PredictionFormatter, TiedScoresInTopKByClassIdWithTheLabelFirst) {
  std::vector<std::string> labels;
  std::vector<float> probs;
  for (int c = 0; c < 14; ++c) {
    labels.push_back("c" + std::to_string(c));
    probs.push_back(c % 3 == 1 ? 0.1f : c == 0 ? 0.0f : 0.05f);
  }
  const Prediction p = prediction_from_probs(probs);
  PredictionFormatter f(labels, PredictionFormat::kJsonl, 14);
  std::string out;
  f.append(out, "t", p);
  const nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j["label"], "c1");
  std::vector<std::string> order;
  for (const auto& e : j["top_k"]) order.push_back(e["label"]);
  const std::vector<std::string> expected = {"c1", "c4", "c7", "c10", "c13", "c2",  "c3",
                                             "c5", "c6", "c8", "c9",  "c11", "c12", "c0"};
  EXPECT_EQ(order, expected);
}

TEST(PredictionFormatter, UnknownAnswerAndTsv) {
  PredictionFormatter jsonl(kLabels, PredictionFormat::kJsonl, 3);
  std::string out;
  jsonl.append(out, "t", Prediction{});
  const nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j["label"], "unknown");
  EXPECT_EQ(j["label_id"], -1);
  EXPECT_TRUE(j["top_k"].empty());

  PredictionFormatter tsv(kLabels, PredictionFormat::kTsv, 3);
  out.clear();
  tsv.append(out, "a\tb\rc", example());  // a bare carriage return would start a new row for some readers
  EXPECT_EQ(out, "a b c\tsports\t0.7\n");
  EXPECT_THROW(parse_prediction_format("csv"), UsageError);
}

// Answers every title it is asked about with class 1 and remembers what it was asked.
class RecordingModel : public Classifier {
 public:
  std::string family() const override { return "recording"; }
  void configure(const nlohmann::json&) override {}
  nlohmann::json config() const override { return {}; }
  nlohmann::json train(const TrainContext&) override { return {}; }
  std::vector<Prediction> predict_batch(const std::vector<std::string>& titles) override {
    asked.push_back(titles);
    return std::vector<Prediction>(titles.size(), example());
  }
  void save(BundleWriter&) const override {}
  void load(const Bundle&) override {}

  std::vector<std::vector<std::string>> asked;
};

TEST(PredictTitles, BlankTitlesAreAbstainedWithoutAskingTheModel) {
  RecordingModel model;
  // Nothing visible: empty, white space, the ideographic space, control and format characters.
  const std::vector<Prediction> p = predict_titles(model, {"", "体育新闻", " \t ", "游戏", "\u3000\u200b\x1f\ufeff"});
  ASSERT_EQ(model.asked.size(), 1u);
  EXPECT_EQ(model.asked[0], (std::vector<std::string>{"体育新闻", "游戏"}));
  ASSERT_EQ(p.size(), 5u);
  EXPECT_TRUE(p[0].abstained && p[2].abstained && p[4].abstained);
  EXPECT_EQ(p[0].label, kUnknownLabel);
  EXPECT_FALSE(p[1].abstained || p[3].abstained);
  EXPECT_EQ(p[1].label, 1);
  EXPECT_EQ(p[3].label, 1);

  predict_titles(model, {"", "  "});
  EXPECT_EQ(model.asked.size(), 1u) << "a batch of blanks asks nothing";
}

TEST(PredictionFormatter, BlankTitleIsAbstainedWithoutMinScore) {
  Prediction blank;
  blank.abstained = true;
  PredictionFormatter jsonl(kLabels, PredictionFormat::kJsonl, 3);
  std::string out;
  jsonl.append(out, " ", blank);
  jsonl.append(out, "t", example());
  EXPECT_EQ(out,
            "{\"title\":\" \",\"label\":null,\"label_id\":-1,\"score\":0,\"abstained\":true,\"top_k\":[]}\n"
            "{\"title\":\"t\",\"label\":\"sports\",\"label_id\":1,\"score\":0.7,\"top_k\":[{\"label\":\"sports\","
            "\"score\":0.7},{\"label\":\"finance\",\"score\":0.2},{\"label\":\"game\",\"score\":0.1}]}\n");
  PredictionFormatter tsv(kLabels, PredictionFormat::kTsv, 3);
  out.clear();
  tsv.append(out, "", blank);
  EXPECT_EQ(out, "\t\t0\n");
}

TEST(Registry, ListsFamiliesInPipelineOrderWithoutLoadingThem) {
  const std::vector<std::string> names = known_families();
  ASSERT_GE(names.size(), 4u);
  EXPECT_EQ(names.front(), "tfidf-rf");
  EXPECT_THROW(find_family("no-such-family"), UsageError);
  for (const std::string& name : names) {
    const Family& family = find_family(name);
    EXPECT_EQ(family.name(), name);
    EXPECT_TRUE(family.default_config().is_object()) << name;
    EXPECT_EQ(family.make_classifier()->family(), name);
  }
}

TEST(Registry, FamiliesAnswerWhatTheCommandsAsk) {
  EXPECT_TRUE(find_family("bert").has_attention());
  EXPECT_FALSE(find_family("fasttext").has_attention());
  EXPECT_THROW(find_family("fasttext").pretrain(PretrainContext{}), UsageError);
  const nlohmann::json local = {{"base_url", "http://127.0.0.1:9/v1"}, {"api_key_env", "NEWSCLS_TEST_NO_SUCH_KEY"}};
  EXPECT_EQ(find_family("llm").unavailable_reason(local), "");
  nlohmann::json remote = strip_docs(find_family("llm").default_config());
  remote["api_key_env"] = "NEWSCLS_TEST_NO_SUCH_KEY";
  EXPECT_NE(find_family("llm").unavailable_reason(remote).find("NEWSCLS_TEST_NO_SUCH_KEY"), std::string::npos);
}

}  // namespace
}  // namespace newscls
