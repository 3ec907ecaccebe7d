#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "newscls/core/classifier.h"
#include "newscls/core/error.h"
#include "serve/api.h"
#include "serve/metrics.h"
#include "serve/models.h"

namespace newscls::serve {
namespace {

// The status and code parse_classify_request throws for body.
std::pair<int, std::string> rejection(const std::string& body, RequestLimits limits = {}) {
  try {
    parse_classify_request(body, limits);
  } catch (const ApiError& e) {
    return {e.status(), e.code()};
  }
  return {200, ""};
}

TEST(ServeApi, ParsesTitlesTopKAndModel) {
  const ClassifyRequest r = parse_classify_request(R"({"titles": ["a", "足球"], "top_k": 5, "model": "m"})", {});
  EXPECT_EQ(r.titles, (std::vector<std::string>{"a", "足球"}));
  EXPECT_EQ(r.top_k, 5);
  EXPECT_EQ(r.model, "m");
  EXPECT_EQ(parse_classify_request(R"({"titles": [""]})", {}).top_k, 3);
}

TEST(ServeApi, RejectsBadRequestsWithTheirCodes) {
  using R = std::pair<int, std::string>;
  EXPECT_EQ(rejection(""), (R{400, "empty_body"}));
  EXPECT_EQ(rejection("{\"titles\": ["), (R{400, "malformed_json"}));
  EXPECT_EQ(rejection("{\"titles\": [\"\xff\"]}"), (R{400, "invalid_utf8"}));
  EXPECT_EQ(rejection(R"({"titles": ["\ud800"]})"), (R{400, "malformed_json"}));  // a lone surrogate
  EXPECT_EQ(rejection(R"(["a"])"), (R{400, "wrong_type"}));
  EXPECT_EQ(rejection(R"({"titles": "a"})"), (R{400, "wrong_type"}));
  EXPECT_EQ(rejection(R"({"titles": ["a", null]})"), (R{400, "wrong_type"}));
  EXPECT_EQ(rejection(R"({"titles": ["a"], "top_k": 0})"), (R{400, "wrong_type"}));
  EXPECT_EQ(rejection(R"({"titles": ["a"], "top_k": 2.5})"), (R{400, "wrong_type"}));
  EXPECT_EQ(rejection(R"({"titles": ["a"], "top_k": true})"), (R{400, "wrong_type"}));
  EXPECT_EQ(rejection(R"({"titles": ["a"], "model": 1})"), (R{400, "wrong_type"}));
  EXPECT_EQ(rejection(R"({"titles": []})"), (R{400, "empty_titles"}));
  EXPECT_EQ(rejection(R"({"top_k": 1})"), (R{400, "missing_titles"}));
  EXPECT_EQ(rejection(R"({"titles": ["a"], "extra": 1})"), (R{400, "unknown_key"}));
  EXPECT_EQ(rejection(R"({"titles": ["a", "b", "c"]})", {2, 64}), (R{413, "too_many_titles"}));
}

TEST(ServeApi, DuplicateKeysAreRefusedByName) {
  using R = std::pair<int, std::string>;
  EXPECT_EQ(rejection(R"({"titles": ["a"], "titles": ["b"]})"), (R{400, "duplicate_key"}));
  EXPECT_EQ(rejection(R"({"titles": ["a"], "top_k": 1, "top_k": 2})"), (R{400, "duplicate_key"}));
  try {
    parse_classify_request(R"({"model": "m", "titles": ["a"], "model": "n"})", {});
    FAIL() << "a duplicated key was accepted";
  } catch (const ApiError& e) {
    EXPECT_NE(std::string(e.what()).find("\"model\" is given twice"), std::string::npos) << e.what();
  }
  // The same key in two objects is no duplicate, nor a key's name inside a string.
  EXPECT_EQ(rejection(R"({"titles": ["a"], "model": {"titles": 1}})"), (R{400, "wrong_type"}));
  EXPECT_EQ(rejection(R"({"titles": ["a", "\"titles\": 1"], "model": "m"})"), (R{200, ""}));
}

TEST(ServeApi, DeepNestingIsRefusedBeforeParsing) {
  const std::string deep(1000000, '[');  // would overflow a recursive parser's stack
  EXPECT_EQ(rejection(deep).second, "too_deep");
  EXPECT_EQ(json_nesting_depth(deep, 64), 65);                               // stops counting past the limit
  EXPECT_EQ(json_nesting_depth(R"({"a": [[1], {"b": "[[[[{{"}]})", 64), 3);  // brackets in strings do not count
  EXPECT_EQ(json_nesting_depth(R"(["\"[[["])", 64), 1);                      // nor after an escaped quote
  EXPECT_EQ(rejection(R"({"titles": ["a"], "model": [[[[1]]]]})", {1024, 3}).second, "too_deep");
}

TEST(ServeApi, ResultsAreWrittenAsPredictWritesThem) {
  Prediction p;
  p.label = 1;
  p.score = 0.6f;
  p.probs = {0.1f, 0.6f, 0.3f};
  Prediction unknown;  // label kUnknownLabel, no probabilities
  const std::vector<std::string> labels = {"体育", "财\"经", "科技"};
  EXPECT_EQ(
      classify_body("\"m\"", {p, unknown}, labels, {}, 2),
      R"({"model":"m","results":[{"label":"财\"经","label_id":1,"score":0.6,"top_k":[{"label":"财\"经","score":0.6},)"
      R"({"label":"科技","score":0.3}]},{"label":"unknown","label_id":-1,"score":0,"top_k":[]}]})");
  p.stage = 1;  // a cascade's answer names its member, as predict does
  EXPECT_EQ(
      classify_body("\"m\"", {p}, labels, {"fasttext", "bert"}, 1),
      R"({"model":"m","results":[{"label":"财\"经","label_id":1,"score":0.6,"stage":"bert","top_k":[{"label":"财\"经","score":0.6}]}]})");
  EXPECT_EQ(error_body("bad", "x\ny"), R"({"error":{"code":"bad","message":"x\ny"}})");
}

TEST(ServeApi, ModelsAreNamedAfterTheirDirectory) {
  EXPECT_EQ(model_name("runs/bert"), "bert");
  EXPECT_EQ(model_name("runs/bert/"), "bert");
  EXPECT_EQ(model_name("/a/b/fasttext//"), "fasttext");
}

TEST(ServeApi, OneFolderGivenTwiceIsRefusedBeforeLoading) {
  const ModelLoader must_not_load = [](const std::string& dir, Manifest&) -> std::unique_ptr<Classifier> {
    ADD_FAILURE() << "loaded " << dir;
    throw UsageError("not loadable");
  };
  for (const std::vector<std::string>& dirs : {std::vector<std::string>{"runs/bert", "runs/bert"},
                                               {"runs/bert", "runs/bert/"},
                                               {"runs/bert", "./runs//bert"}}) {
    try {
      load_model_set(dirs, {}, must_not_load, nullptr);
      ADD_FAILURE() << dirs[1] << " was taken for a second bundle";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("--model-dir " + dirs[1] + " is the folder runs/bert given again"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(ServeMetrics, PrometheusTextHasCountersHistogramsAndGauges) {
  ServeMetrics m;
  m.record_request("/v1/classify", 200, 0.003);
  m.record_request("/v1/classify", 200, 0.2);
  m.record_request("/some/scan/path", 404, 0.0001);  // unknown paths share one label
  m.record_batch("fast\"text", 64);
  const std::string text = m.render({{"fast\"text", 2}});
  for (const char* line :
       {"newscls_http_requests_total{path=\"/v1/classify\",status=\"200\"} 2\n",
        "newscls_http_requests_total{path=\"other\",status=\"404\"} 1\n",
        "newscls_http_request_duration_seconds_bucket{path=\"/v1/classify\",le=\"0.005\"} 1\n",
        "newscls_http_request_duration_seconds_bucket{path=\"/v1/classify\",le=\"+Inf\"} 2\n",
        "newscls_http_request_duration_seconds_count{path=\"/v1/classify\"} 2\n",
        "newscls_batch_size_bucket{model=\"fast\\\"text\",le=\"32\"} 0\n",
        "newscls_batch_size_bucket{model=\"fast\\\"text\",le=\"64\"} 1\n",
        "newscls_titles_total{model=\"fast\\\"text\"} 64\n", "newscls_queue_depth{model=\"fast\\\"text\"} 2\n",
        "# TYPE newscls_batch_size histogram\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
}

// The pause gauge is of the models served now, for those that send requests.
TEST(ServeMetrics, EndpointPausedGaugeOfTheModelsServedNow) {
  ServeMetrics m;
  m.record_requests("paused", {{"requests_sent", 3}});
  m.record_requests("up", {{"requests_sent", 3}});
  m.record_requests("gone", {{"requests_sent", 3}});  // reloaded away
  const std::string text = m.render({{"paused", 0, true}, {"up", 0, false}, {"fasttext", 2, false}});
  for (const char* line :
       {"# TYPE newscls_llm_endpoint_paused gauge\n", "newscls_llm_endpoint_paused{model=\"paused\"} 1\n",
        "newscls_llm_endpoint_paused{model=\"up\"} 0\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
  for (const char* absent :
       {"newscls_llm_endpoint_paused{model=\"fasttext\"}", "newscls_llm_endpoint_paused{model=\"gone\"}"}) {
    EXPECT_EQ(text.find(absent), std::string::npos) << absent << "\n" << text;
  }
}

// A classifier whose endpoint is paused for `pause_s` after each batch, answering "a".
class PausedClassifier : public Classifier {
 public:
  explicit PausedClassifier(double pause_s) : pause_s_(pause_s) {}
  std::string family() const override { return "llm"; }
  void configure(const nlohmann::json&) override {}
  nlohmann::json config() const override { return nlohmann::json::object(); }
  nlohmann::json train(const TrainContext&) override { return nlohmann::json::object(); }
  std::vector<Prediction> predict_batch(const std::vector<std::string>& titles) override {
    Prediction p;
    p.label = 0;
    p.score = 1;
    p.probs = {1.0F, 0.0F};
    return std::vector<Prediction>(titles.size(), p);
  }
  double endpoint_paused_s() const override { return pause_s_; }
  void save(BundleWriter&) const override {}
  void load(const Bundle&) override {}

 private:
  double pause_s_;
};

// As its last batch left it, and ended by the clock with no batch after it. The pause is
// long enough to be seen right after the batch on a busy machine; its end is polled for.
TEST(ServedModel, EndpointPausedAfterABatchUntilThePauseEnds) {
  Manifest manifest;
  manifest.family = "llm";
  manifest.labels = {"a", "b"};
  ServedModel model("llm", std::make_unique<PausedClassifier>(2.0), manifest, {}, nullptr);
  EXPECT_FALSE(model.endpoint_paused());
  model.batcher().submit({"一个标题"}).get();
  EXPECT_TRUE(model.endpoint_paused());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (model.endpoint_paused() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_FALSE(model.endpoint_paused()) << "the pause had not ended 60 s after the batch";
}

}  // namespace
}  // namespace newscls::serve
