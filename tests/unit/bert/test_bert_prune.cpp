// Head pruning (compress --method prune): removing heads equals masking them, importance is
// normalised per layer, a pruned bundle reloads and predicts as the masked original, attention
// dumps work with different head counts per layer, bad settings are refused naming the key,
// and an imported Hugging Face classifier prunes too.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "bert/bert.h"
#include "bert/compress/compress.h"
#include "bert/compress/prune.h"
#include "bert/model/settings.h"
#include "bert/model/tensor_io.h"
#include "bert/tokens/title_tokenizer.h"
#include "unit/bert/tiny_arch.h"
#include "newscls/core/bundle.h"
#include "newscls/core/config.h"
#include "newscls/core/error.h"
#include "newscls/workflow/registry.h"
#include "unit/test_hf_support.h"
#include "unit/test_support.h"

namespace newscls::bert {
namespace {

// Every tensor random (biases too, so a wrongly sliced bias shows).
void randomise(ClassifierModel& m) {
  torch::NoGradGuard no_grad;
  for (auto& p : m->parameters()) p.normal_(0.0, 0.5);
}

TEST(BertPrune, RemovingHeadsEqualsMaskingThem) {
  torch::manual_seed(3);
  const Architecture arch = tiny_test_arch(/*hidden=*/16, /*ff=*/24);
  auto rng = std::make_shared<MaskRng>(1);
  ClassifierModel model(arch, 3, rng);
  randomise(model);
  model->eval();
  const HeadsKept kept = {{0, 2}, {3}};
  Architecture pruned_arch;
  ClassifierModel pruned = remove_heads(model, arch, kept, 3, rng, &pruned_arch);
  EXPECT_EQ(pruned_arch.heads_per_layer, (std::vector<std::int64_t>{2, 1}));

  torch::NoGradGuard no_grad;
  const torch::Tensor ids = torch::randint(5, 40, {3, 9}, torch::kInt64);
  torch::Tensor valid = torch::ones({3, 9}, torch::kBool);
  valid[1].slice(0, 5).fill_(false);  // a padded title
  model->encoder->set_head_masks(head_masks(arch, kept));
  const torch::Tensor masked = model(ids, valid);
  const torch::Tensor masked_hidden = model->encoder(ids, valid).hidden;
  model->encoder->set_head_masks({});
  const torch::Tensor unmasked = model(ids, valid);
  EXPECT_LE((pruned(ids, valid) - masked).abs().max().item<double>(), 1e-5);
  EXPECT_LE((pruned->encoder(ids, valid).hidden - masked_hidden).abs().max().item<double>(), 1e-5);
  EXPECT_GT((unmasked - masked).abs().max().item<double>(), 1e-3) << "masking must change the outputs";
  // Fewer parameters: 3 heads' Q/K/V rows (and biases) and output columns in layer 0 and 1.
  std::int64_t before = 0, after = 0;
  for (const auto& p : model->parameters()) before += p.numel();
  for (const auto& p : pruned->parameters()) after += p.numel();
  EXPECT_EQ(before - after, 5 * 4 * (3 * (16 + 1) + 16));
}

TEST(BertPrune, ImportanceIsNormalisedPerLayerAndMaskedHeadsStillScore) {
  torch::manual_seed(4);
  const Architecture arch = tiny_test_arch(/*hidden=*/16, /*ff=*/24);
  ClassifierModel model(arch, 3, std::make_shared<MaskRng>(1));
  randomise(model);
  Encoded titles;
  std::vector<int> labels;
  for (int i = 0; i < 20; ++i) {
    titles.push_back({2, 5 + i % 7, 9 + i % 5, 12 + i % 3, 3});
    labels.push_back(i % 3);
  }
  const ScoredTitles data{&titles, &labels, 8};
  const HeadScores s = gradient_importance(model, head_masks(arch, all_heads(arch)), data);
  ASSERT_EQ(s.size(), 2u);
  for (const auto& layer : s) {
    ASSERT_EQ(layer.size(), 4u);
    double norm = 0;
    for (double v : layer) norm += v * v;
    EXPECT_NEAR(norm, 1.0, 1e-6);
  }
  const double acc = masked_accuracy(model, {}, data);
  EXPECT_GE(acc, 0.0);
  EXPECT_LE(acc, 1.0);
}

TEST(BertPrune, OldConfigsHaveEveryHeadAndBadHeadCountsAreRefused) {
  nlohmann::json c = strip_docs(default_config());
  c.erase("heads_per_layer");
  EXPECT_TRUE(parse_settings(c).arch.heads_per_layer.empty());
  c["heads_per_layer"] = {3, 1};
  EXPECT_EQ(parse_settings(c).arch.heads_per_layer, (std::vector<std::int64_t>{3, 1}));
  for (const nlohmann::json& bad : {nlohmann::json{3}, nlohmann::json{3, 0}, nlohmann::json{5, 1}}) {
    c["heads_per_layer"] = bad;
    try {
      parse_settings(c);
      ADD_FAILURE() << "accepted " << bad.dump();
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("heads_per_layer"), std::string::npos) << e.what();
    }
  }
}

// Titles drawn from one of two character sets, which a tiny model separates in a few steps.
struct TinyData {
  Dataset train, dev;
  LabelSet labels{{"animals", "vehicles"}};
  TinyData() {
    const std::vector<std::vector<std::string>> chars = {{"猫", "狗", "兔", "鸟", "鱼"},
                                                         {"车", "船", "机", "轨", "站"}};
    for (int i = 0; i < 48; ++i) {
      const int label = i % 2;
      std::string title;
      for (int k = 0; k < 3 + i % 4; ++k) title += chars[label][(i * 7 + k * 3) % 5];
      Dataset& d = i < 36 ? train : dev;
      d.titles.push_back(title);
      d.labels.push_back(label);
    }
  }
};

std::string train_tiny_bundle(const TinyData& data, const std::string& dir, const std::vector<std::string>& more = {}) {
  nlohmann::json c = strip_docs(default_config());
  for (const char* kv :
       {"layers=2", "hidden=32", "heads=4", "ff=64", "max_len=16", "batch_size=8", "epochs=1", "pretrain_epochs=0",
        "lr=0.003", "vocab_min_count=1", "dropout=0.0", "attention_dropout=0.0", "bigram_buckets=128"}) {
    apply_override(c, kv);
  }
  for (const std::string& kv : more) apply_override(c, kv);
  auto model = make_classifier();
  model->configure(c);
  TrainContext ctx;
  ctx.train = &data.train;
  ctx.dev = &data.dev;
  ctx.labels = &data.labels;
  ctx.seed = 5;
  model->train(ctx);
  BundleWriter writer(dir);
  model->save(writer);
  writer.commit(Manifest{"bert", kBundleFormatVersion, data.labels.names, model->config(), {}, {}});
  return dir;
}

CompressContext prune_request(const TinyData& data, const std::string& from, const std::string& to,
                              std::vector<std::string> overrides) {
  CompressContext r;
  r.method = "prune";
  r.model_dir = from;
  r.out_dir = to;
  r.overrides = std::move(overrides);
  r.train = &data.train;
  r.dev = &data.dev;
  r.labels = &data.labels;
  return r;
}

// The original bundle's probabilities with the removed heads masked.
torch::Tensor masked_original(const std::string& dir, const nlohmann::json& removed, const Dataset& dev) {
  const Bundle bundle = Bundle::open(dir);
  Settings o = parse_settings(bundle.manifest().config);
  const TitleTokenizer tok = TitleTokenizer::load(bundle, o.tokenizer);
  o.arch.vocab_size = std::max(o.arch.vocab_size, tok.size());
  ClassifierModel model(o.arch, static_cast<std::int64_t>(bundle.manifest().labels.size()),
                        std::make_shared<MaskRng>(1));
  load_tensors(bundle.payload_path("weights.bin"), named_state(*model));
  std::vector<torch::Tensor> masks;
  for (std::int64_t l = 0; l < o.arch.layers; ++l) masks.push_back(torch::ones({o.arch.heads}));
  for (const auto& lh : removed) masks[lh[0].get<std::size_t>()][lh[1].get<std::int64_t>()] = 0.0f;
  model->encoder->set_head_masks(masks);
  Encoded encoded;
  for (const auto& t : dev.titles) encoded.push_back(tok.encode(t, o.arch.max_len));
  return predict_probs(model, encoded, 64);
}

void expect_predicts_as_masked(const std::string& original, const std::string& pruned_dir, const nlohmann::json& facts,
                               const Dataset& dev) {
  const torch::Tensor want = masked_original(original, facts.at("removed_heads"), dev);
  auto loaded = load_classifier(pruned_dir);
  const std::vector<Prediction> got = loaded->predict_batch(dev.titles);
  ASSERT_EQ(static_cast<std::int64_t>(got.size()), want.size(0));
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    for (std::size_t k = 0; k < got[i].probs.size(); ++k) {
      worst = std::max(
          worst,
          std::abs(got[i].probs[k] - want[static_cast<std::int64_t>(i)][static_cast<std::int64_t>(k)].item<double>()));
    }
  }
  EXPECT_LE(worst, 1e-5);
}

TEST(BertPrune, PrunedBundleReloadsPredictsAsMaskedAndDumpsAttention) {
  const std::string dir = testing::scratch_dir();
  TinyData data;
  const std::string original = train_tiny_bundle(data, dir + "/bert");
  const nlohmann::json facts =
      compress_bundle(prune_request(data, original, dir + "/pruned", {"prune_heads=0.5", "recover_epochs=0"}));
  EXPECT_EQ(facts.at("heads_removed").get<int>(), 4);
  EXPECT_EQ(facts.at("removed_heads").size(), 4u);
  EXPECT_LT(facts.at("parameters_after").get<std::int64_t>(), facts.at("parameters_before").get<std::int64_t>());
  const auto curve = facts.at("dev_accuracy_by_heads_removed").get<std::vector<double>>();
  ASSERT_EQ(curve.size(), 7u);  // 0..6 heads removed (each layer keeps one)
  EXPECT_DOUBLE_EQ(facts.at("dev_accuracy_pruned").get<double>(), curve[4]);
  for (const auto& f : facts.at("figures")) {
    const std::string path = dir + "/pruned/" + f.get<std::string>();
    ASSERT_TRUE(std::filesystem::exists(path)) << path;
    std::ifstream in(path);
    const std::string svg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  }
  const Bundle pruned = Bundle::open(dir + "/pruned");
  EXPECT_EQ(pruned.manifest().config.at("heads_per_layer"), facts.at("heads_per_layer"));
  expect_predicts_as_masked(original, dir + "/pruned", facts, data.dev);

  auto loaded = load_classifier(dir + "/pruned");
  loaded->dump_attention({data.dev.titles[0]}, 0, dir + "/attention", {});
  const auto j = nlohmann::json::parse(std::ifstream(dir + "/attention/0.json"));
  const auto per_layer = facts.at("heads_per_layer").get<std::vector<std::int64_t>>();
  EXPECT_EQ(j.at("heads_per_layer").get<std::vector<std::int64_t>>(), per_layer);
  for (std::size_t l = 0; l < per_layer.size(); ++l) {
    EXPECT_EQ(static_cast<std::int64_t>(j.at("weights")[l].size()), per_layer[l]);
  }
}

TEST(BertPrune, GreedyDevDropAndRecoveryRun) {
  const std::string dir = testing::scratch_dir();
  TinyData data;
  const std::string original = train_tiny_bundle(data, dir + "/bert");
  const nlohmann::json facts = compress_bundle(
      prune_request(data, original, dir + "/pruned", {"max_dev_drop=1", "recover_epochs=1", "recover_max_steps=2"}));
  EXPECT_EQ(facts.at("heads_removed").get<int>(), 6) << "a drop of 1 allows every removable head";
  EXPECT_EQ(facts.at("recovery").at("steps").get<int>(), 2);
  EXPECT_EQ(facts.at("recovery_kept").get<bool>(),
            facts.at("dev_accuracy_recovered").get<double>() >= facts.at("dev_accuracy_pruned").get<double>());
  EXPECT_NO_THROW(load_classifier(dir + "/pruned")->predict_batch(data.dev.titles));
}

// Recovery is chosen on dev like every other step: a recovery that lowers dev accuracy (here
// a learning rate of 1 on the tiny model) is not kept; the bundle predicts as the pruned model did.
TEST(BertPrune, RecoveryThatLowersDevAccuracyIsNotKept) {
  const std::string dir = testing::scratch_dir();
  TinyData data;
  const std::string original =
      train_tiny_bundle(data, dir + "/bert", {"epochs=30", "patience=30", "lr=0.01"});  // above chance, to lose
  const nlohmann::json facts = compress_bundle(prune_request(
      data, original, dir + "/pruned", {"prune_heads=2", "recover_epochs=1", "recover_lr=1", "recover_warmup=0"}));
  ASSERT_LT(facts.at("dev_accuracy_recovered").get<double>(), facts.at("dev_accuracy_pruned").get<double>())
      << "the setting no longer makes recovery worse: choose another to reach the rule";
  EXPECT_FALSE(facts.at("recovery_kept").get<bool>());
  expect_predicts_as_masked(original, dir + "/pruned", facts, data.dev);
}

TEST(BertPrune, BadSettingsAreRefusedNamingTheKey) {
  const std::string dir = testing::scratch_dir();
  TinyData data;
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"prune_heds=2"}, "prune_heds"},          {{"prune_heads=1.5"}, "prune_heads"},
      {{"prune_heads=0"}, "prune_heads"},        {{"importance=random"}, "importance"},
      {{"recover_epochs=-1"}, "recover_epochs"}, {{"prune_heads=2", "max_dev_drop=0.01"}, "max_dev_drop"}};
  for (const auto& [overrides, key] : cases) {
    try {
      compress_bundle(prune_request(data, dir + "/none", dir + "/out", overrides));
      ADD_FAILURE() << "accepted " << overrides.front();
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("'" + key + "'"), std::string::npos) << e.what();
    }
  }
  // Known only once the bundle is open: more heads than can go.
  const std::string original = train_tiny_bundle(data, dir + "/bert");
  try {
    compress_bundle(prune_request(data, original, dir + "/out", {"prune_heads=7", "recover_epochs=0"}));
    ADD_FAILURE() << "accepted 7 of 8 heads with 2 layers";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'prune_heads'"), std::string::npos) << e.what();
  }
  try {  // 1% of 8 heads is none: it compressed nothing, without a word
    compress_bundle(prune_request(data, original, dir + "/out", {"prune_heads=0.01", "recover_epochs=0"}));
    ADD_FAILURE() << "accepted a fraction that removes no head";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("rounds to none"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/out"));
}

// An imported Hugging Face classifier (random weights, 2 layers x 4 heads, WordPiece) prunes,
// recovers, reloads and predicts as the masked original.
TEST(BertPrune, ImportedHuggingFaceClassifierPrunes) {
  const std::string dir = testing::scratch_dir();
  const std::string ck = dir + "/ck";
  testing::copy_tiny_hf_classifier(ck);
  import_hf_bundle({kHuggingFaceFormat, ck, dir + "/imported"});
  TinyData data;  // titles only matter; ten labels as in id2label
  data.labels.names = Bundle::open(dir + "/imported").manifest().labels;
  const nlohmann::json facts = compress_bundle(prune_request(data, dir + "/imported", dir + "/pruned",
                                                             {"prune_heads=4", "recover_epochs=0", "importance=drop"}));
  EXPECT_EQ(facts.at("heads_removed").get<int>(), 4);
  expect_predicts_as_masked(dir + "/imported", dir + "/pruned", facts, data.dev);
}

}  // namespace
}  // namespace newscls::bert
