// Distillation: the attention-KL and soft-label losses (zero and stationary at equality,
// gradients against finite differences in double precision), the layer map, and a student
// bundle distilled from a tiny teacher that saves, loads and predicts.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "bert/bert.h"
#include "bert/compress/attention_kl.h"
#include "bert/compress/compress.h"
#include "newscls/core/bundle.h"
#include "newscls/core/config.h"
#include "newscls/core/error.h"
#include "newscls/workflow/compress_workflow.h"
#include "newscls/workflow/registry.h"
#include "unit/test_support.h"

namespace newscls::bert {
namespace {

const auto kDouble = torch::TensorOptions().dtype(torch::kFloat64);

// Attention rows over keys with the padded ones masked, as the encoder makes them.
torch::Tensor masked_softmax(const torch::Tensor& scores, const torch::Tensor& key_valid) {
  const torch::Tensor keys = key_valid.unsqueeze(1).unsqueeze(1);
  return torch::softmax(scores.masked_fill(keys.logical_not(), -std::numeric_limits<double>::infinity()), -1);
}

torch::Tensor tiny_key_valid() {
  return torch::tensor({1, 1, 1, 0, 1, 1, 1, 1}, torch::kBool).view({2, 4});  // row 0 padded at the end
}

TEST(DistillAttentionKl, ZeroForIdenticalAttentionAndItsGradientMatchesFiniteDifferences) {
  torch::manual_seed(3);
  const torch::Tensor valid = tiny_key_valid();
  const torch::Tensor teacher = masked_softmax(torch::randn({2, 2, 4, 4}, kDouble), valid);
  EXPECT_NEAR(attention_kl(teacher, teacher.clone(), valid).item<double>(), 0.0, 1e-12);
  // Different head counts: both sides averaged over heads, so equal means still give zero.
  EXPECT_NEAR(attention_kl(teacher, teacher.mean(1, true), valid).item<double>(), 0.0, 1e-12);

  torch::Tensor scores = torch::randn({2, 2, 4, 4}, kDouble).requires_grad_(true);
  const auto loss_of = [&](const torch::Tensor& s) { return attention_kl(teacher, masked_softmax(s, valid), valid); };
  const torch::Tensor loss = loss_of(scores);
  EXPECT_GT(loss.item<double>(), 1e-3);
  loss.backward();
  const torch::Tensor analytic = scores.grad();
  torch::NoGradGuard no_grad;
  const double h = 1e-6;
  const torch::Tensor base = scores.detach();
  double worst = 0;
  for (std::int64_t i = 0; i < base.numel(); ++i) {
    torch::Tensor plus = base.clone(), minus = base.clone();
    plus.view({-1})[i] += h;
    minus.view({-1})[i] -= h;
    const double numeric = (loss_of(plus).item<double>() - loss_of(minus).item<double>()) / (2 * h);
    worst = std::max(worst, std::abs(numeric - analytic.view({-1})[i].item<double>()));
  }
  EXPECT_LT(worst, 1e-7);
  // Scores of padded keys get no gradient: they carry no weight on either side.
  EXPECT_EQ(analytic.select(0, 0).select(-1, 3).abs().max().item<double>(), 0.0);
}

TEST(DistillSoftLabels, ZeroWithZeroGradientAtEqualityAndFiniteDifferencesElsewhere) {
  torch::manual_seed(4);
  const double t = 2.5;
  const torch::Tensor logits = torch::randn({3, 4}, kDouble);
  const torch::Tensor teacher = torch::log_softmax(logits / t, 1);
  torch::Tensor z = logits.clone().requires_grad_(true);
  const torch::Tensor at_equality = soft_label_kl(z, teacher, t);
  EXPECT_NEAR(at_equality.item<double>(), 0.0, 1e-12);
  at_equality.backward();
  EXPECT_LT(z.grad().abs().max().item<double>(), 1e-12);

  // Softening probabilities p by T on their logs is softmax(log p / T).
  EXPECT_TRUE(torch::allclose(soften_probabilities(torch::softmax(logits, 1), t), teacher));

  torch::Tensor w = torch::randn({3, 4}, kDouble).requires_grad_(true);
  soft_label_kl(w, teacher, t).backward();
  // d/dz of T^2 KL per row mean: T (softmax(z/T) - teacher) / rows.
  const torch::Tensor expected = t * (torch::softmax(w.detach() / t, 1) - teacher.exp()) / 3.0;
  EXPECT_LT((w.grad() - expected).abs().max().item<double>(), 1e-12);
}

TEST(DistillLayerMap, StudentLayersTakeTheLastTeacherLayerOfTheirBlock) {
  EXPECT_EQ(teacher_layer_map(1, 2), (std::vector<std::int64_t>{1}));
  EXPECT_EQ(teacher_layer_map(2, 4), (std::vector<std::int64_t>{1, 3}));
  EXPECT_EQ(teacher_layer_map(2, 2), (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(teacher_layer_map(3, 2), (std::vector<std::int64_t>{0, 0, 1}));
}

TEST(DistillTeacherWeights, ChosenOnTheGoldLabelsWithEqualWeightsWinningTies) {
  // Teacher 0 is right on titles 0-1, teacher 1 on 2-3 and surer; together they need weights.
  const std::vector<std::vector<std::vector<float>>> probs = {
      {{0.6f, 0.4f}, {0.4f, 0.6f}, {0.9f, 0.1f}, {0.55f, 0.45f}},
      {{0.3f, 0.7f}, {0.7f, 0.3f}, {0.2f, 0.8f}, {0.45f, 0.55f}}};
  const std::vector<int> gold = {0, 1, 1, 1};
  const std::vector<double> w = choose_teacher_weights(probs, gold, 20);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_NEAR(w[0] + w[1], 1.0, 1e-12);
  EXPECT_GT(w[1], 0.5);  // equal weights get none right; teacher 1 with over 4/7 of the weight gets 2 and 3
  EXPECT_EQ(choose_teacher_weights(probs, {1, 0, 0, 0}, 20), (std::vector<double>{0.5, 0.5}));
}

struct TinyTask {
  Dataset train, dev;
  LabelSet labels{{"animals", "vehicles"}};
  TinyTask() {
    const std::vector<std::string> a = {"猫狗猫狗", "狗猫兔", "兔兔猫", "猫猫狗兔狗"};
    const std::vector<std::string> b = {"车船车", "船船飞机", "飞机车", "车车船机"};
    for (int i = 0; i < 24; ++i) {
      Dataset& d = i < 16 ? train : dev;
      d.titles.push_back(a[i % 4] + (i % 3 ? "了" : ""));
      d.labels.push_back(0);
      d.titles.push_back(b[i % 4] + (i % 3 ? "了" : ""));
      d.labels.push_back(1);
    }
  }
};

// A two-layer teacher bundle trained for a few steps, without pretraining.
std::string tiny_teacher(const TinyTask& task, const std::string& dir) {
  auto model = make_classifier();
  nlohmann::json c = strip_docs(default_config());
  for (const char* kv : {"layers=2", "hidden=32", "heads=4", "ff=64", "max_len=16", "batch_size=8", "epochs=2",
                         "pretrain_epochs=0", "lr=0.003", "vocab_min_count=1", "bigram_buckets=64"}) {
    apply_override(c, kv);
  }
  model->configure(c);
  TrainContext ctx;
  ctx.train = &task.train;
  ctx.labels = &task.labels;
  ctx.seed = 2;
  model->train(ctx);
  BundleWriter writer(dir);
  model->save(writer);
  Manifest m;
  m.family = family().name();
  m.labels = task.labels.names;
  m.config = model->config();
  writer.commit(m);
  return dir;
}

CompressContext distill_request(const TinyTask& task, const std::string& teacher, const std::string& out) {
  CompressContext r;
  r.method = "distill";
  r.model_dir = teacher;
  r.train = &task.train;
  r.dev = &task.dev;
  r.labels = &task.labels;
  r.teacher_probs = [teacher](const std::vector<std::string>& titles) {
    std::vector<std::vector<float>> rows;
    for (const Prediction& p : load_classifier(teacher)->predict_batch(titles)) rows.push_back(p.probs);
    return rows;
  };
  r.out_dir = out;
  return r;
}

TEST(DistillBundle, StudentWithAttentionTermSavesLoadsAndPredicts) {
  const std::string dir = testing::scratch_dir();
  const TinyTask task;
  const std::string teacher = tiny_teacher(task, dir + "/teacher");
  CompressContext r = distill_request(task, teacher, dir + "/student");
  r.overrides = {"layers=1",    "hidden=16",          "heads=2",  "ff=32",
                 "init=random", "attention_weight=1", "epochs=3", "max_steps=3"};
  r.unlabelled = {"猫兔兔", "船车"};
  const nlohmann::json facts = distill_bundle(r);
  EXPECT_EQ(facts.at("parameters_before").get<std::int64_t>() > facts.at("parameters_after").get<std::int64_t>(), true);
  EXPECT_EQ(facts.at("teacher_layer_map"), nlohmann::json::array({1}));
  EXPECT_EQ(facts.at("steps").get<int>(), 3);
  EXPECT_EQ(facts.at("settings").at("temperature").get<double>(), 1.0);  // defaults reported too

  const Bundle bundle = Bundle::open(dir + "/student");
  EXPECT_EQ(bundle.manifest().config.at("hidden").get<int>(), 16);
  auto student = load_classifier(dir + "/student");
  const std::vector<Prediction> p = student->predict_batch(task.dev.titles);
  ASSERT_EQ(p.size(), task.dev.size());
  for (const Prediction& x : p) EXPECT_NEAR(x.probs[0] + x.probs[1], 1.0f, 1e-5);
  EXPECT_EQ(load_classifier(dir + "/student")->predict_batch(task.dev.titles)[0].probs, p[0].probs);
}

TEST(DistillBundle, TeacherInitAndUnknownSettingsRefusedNamingTheKey) {
  const std::string dir = testing::scratch_dir();
  const TinyTask task;
  const std::string teacher = tiny_teacher(task, dir + "/teacher");
  CompressContext r = distill_request(task, teacher, dir + "/student");
  r.overrides = {"layers=1", "temperature_x=2"};
  try {
    distill_bundle(r);
    FAIL() << "an unknown key was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("temperature_x"), std::string::npos) << e.what();
  }
  r.overrides = {"hidden=16", "init=teacher"};
  EXPECT_THROW(distill_bundle(r), ConfigError);  // teacher init needs the teacher's widths
  r.overrides = {"init=teacher", "alpha=0", "max_steps=2"};
  EXPECT_EQ(distill_bundle(r).at("settings").at("hidden").get<int>(), 32);
  EXPECT_EQ(load_classifier(dir + "/student")->predict_batch({"猫狗"}).size(), 1u);
}

}  // namespace
}  // namespace newscls::bert
