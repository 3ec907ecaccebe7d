// The bert family end to end on a tiny model: vocabulary, payloads, dropout, schedule,
// and a train / save / load / predict round trip with checkpoints and determinism.
#include <filesystem>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <utility>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "bert/bert.h"
#include "bert/model/attention_dump.h"
#include "bert/model/encoder.h"
#include "bert/model/fast_dropout.h"
#include "bert/model/settings.h"
#include "bert/model/tensor_io.h"
#include "bert/tokens/batching.h"
#include "bert/tokens/vocab.h"
#include "bert/train/training.h"
#include "newscls/core/bundle.h"
#include "newscls/core/config.h"
#include "newscls/core/error.h"
#include "newscls/workflow/registry.h"
#include "unit/config_table_checks.h"
#include "unit/test_support.h"

extern "C" int openblas_get_num_threads() __attribute__((weak));  // absent under another BLAS

namespace newscls::bert {
namespace {

TEST(BertVocab, EncodesWithSpecialTokensAndTruncates) {
  CharVocab v = CharVocab::build({"ＮＢＡ季后赛", "季后赛", "x"}, 2, 100);
  EXPECT_EQ(v.tokens()[kCls], "[CLS]");
  std::vector<std::int64_t> ids = v.encode("季后赛z", 64);
  ASSERT_EQ(ids.size(), 6u);
  EXPECT_EQ(ids.front(), kCls);
  EXPECT_EQ(ids.back(), kSep);
  EXPECT_EQ(ids[4], kUnk);  // z is unseen
  EXPECT_EQ(v.tokens_of(ids)[1], "季");
  EXPECT_EQ(v.encode("季后赛季后赛", 4).size(), 4u);
  const std::string path = testing::scratch_dir() + "/vocab.bin";
  v.save(path);
  EXPECT_EQ(CharVocab::load(path).tokens(), v.tokens());
}

TEST(BertVocab, FoldPunctuationReadsMarksAsTheSpaceAndKeepsTheVocabulary) {
  CharVocab v = CharVocab::build({"季后赛 决赛？", "季后赛 决赛？"}, 2, 100);
  EXPECT_EQ(v.encode("季后赛？决赛", 64, true), v.encode("季后赛 决赛", 64, false));
  EXPECT_NE(v.encode("季后赛？决赛", 64, false), v.encode("季后赛 决赛", 64, false));
  EXPECT_EQ(v.encode("？季后赛！", 64, true), v.encode("季后赛", 64, false));
}

TEST(BertJoin, JoinsTitlesOfTheSameLabelAndCutsAtMaxLen) {
  const std::vector<std::vector<std::int64_t>> encoded = {
      {kCls, 10, 11, kSep}, {kCls, 20, kSep}, {kCls, 30, 31, 32, kSep}};
  const std::vector<int> labels = {0, 1, 0};
  const std::vector<std::vector<std::size_t>> by_label = {{0, 2}, {1}};
  std::mt19937_64 rng(3);
  EXPECT_EQ(join_same_label(encoded, 2, by_label, labels, 0.0, 64, rng), encoded[2]);
  EXPECT_EQ(join_same_label(encoded, 1, by_label, labels, 0.0, 64, rng), encoded[1]);
  const auto one = join_same_label(encoded, 1, by_label, labels, 1.0, 64, rng);
  EXPECT_EQ(one, (std::vector<std::int64_t>{kCls, 20, kSep, 20, kSep}));  // label 1 has one title
  const auto joined = join_same_label(encoded, 0, by_label, labels, 1.0, 64, rng);
  ASSERT_GE(joined.size(), 6u);
  EXPECT_EQ(std::vector<std::int64_t>(joined.begin(), joined.begin() + 4), encoded[0]);
  EXPECT_TRUE(joined[4] == 10 || joined[4] == 30) << joined[4];
  const auto cut = join_same_label(encoded, 2, by_label, labels, 1.0, 6, rng);
  ASSERT_EQ(cut.size(), 6u);
  EXPECT_EQ(cut.back(), kSep);
  // WordPiece ids (bert-base-chinese: [CLS] 101, [SEP] 102): a cut ends on that [SEP], not kSep.
  const std::vector<std::vector<std::int64_t>> wordpiece = {{101, 10, 11, 102}, {101, 30, 31, 32, 102}};
  const auto cut_wp = join_same_label(wordpiece, 0, {{0, 1}}, {0, 0}, 1.0, 6, rng);
  ASSERT_EQ(cut_wp.size(), 6u);
  EXPECT_EQ(cut_wp.back(), 102);
}

TEST(BertOptions, BundlesWithoutTheNewKeysNeitherFoldNorJoin) {
  nlohmann::json config = settings_table().defaults();
  config["fold_punctuation"] = true;
  config["join_prob"] = 0.25;
  EXPECT_TRUE(parse_settings(config).fold_punctuation);
  EXPECT_EQ(parse_settings(config).join_prob, 0.25);
  config["join_prob"] = 1.5;
  EXPECT_THROW(parse_settings(config), ConfigError);
  config.erase("fold_punctuation");
  config.erase("join_prob");
  EXPECT_FALSE(parse_settings(config).fold_punctuation);
  EXPECT_EQ(parse_settings(config).join_prob, 0.0);
}

TEST(BertSettings, EachKeyOfTheTableHolds) { testing::expect_table_holds(settings_table(), parse_settings); }

TEST(BertBigrams, HashPairsIntoBucketsAndHideSpecialTokens) {
  const std::int64_t vocab = 50, buckets = 97;
  torch::Tensor ids =
      torch::tensor(std::vector<std::int64_t>{kCls, 7, 9, 7, 9, kMask, 9, kSep, kPad}, torch::kInt64).view({1, 9});
  const torch::Tensor hashed = ngram_buckets(ids, vocab, buckets, 2);
  auto b = hashed.accessor<std::int64_t, 2>();
  EXPECT_EQ(b[0][0], 0) << "[CLS] starts no bigram";
  EXPECT_GE(b[0][1], 1);
  EXPECT_LT(b[0][1], buckets);
  EXPECT_EQ(b[0][1], b[0][3]) << "the same pair gets the same bucket wherever it stands";
  EXPECT_NE(b[0][1], b[0][2]) << "(7,9) and (9,7) differ here";
  EXPECT_EQ(b[0][4], 0) << "a masked character hides the bigram before it";
  EXPECT_EQ(b[0][5], 0) << "and the one it starts";
  EXPECT_EQ(b[0][6], 0) << "[SEP] ends no bigram";
  EXPECT_EQ(b[0][8], 0) << "padding has none";
}

TEST(BertTrigrams, HashTriplesIntoBucketsAndHideSpecialTokens) {
  const std::int64_t vocab = 50, buckets = 97;
  torch::Tensor ids =
      torch::tensor(std::vector<std::int64_t>{kCls, 7, 9, 8, 7, 9, 8, kMask, 9, 6, kSep}, torch::kInt64).view({1, 11});
  auto b = ngram_buckets(ids, vocab, buckets, 3).contiguous();
  auto t = b.accessor<std::int64_t, 2>();
  EXPECT_EQ(t[0][0], 0) << "[CLS] starts no trigram";
  EXPECT_GE(t[0][1], 1);
  EXPECT_LT(t[0][1], buckets);
  EXPECT_EQ(t[0][1], t[0][4]) << "(7,9,8) gets one bucket wherever it stands";
  EXPECT_NE(t[0][1], t[0][2]) << "(7,9,8) and (9,8,7) differ here";
  for (int i : {5, 6, 7}) EXPECT_EQ(t[0][i], 0) << "the mask hides every trigram through it, at " << i;
  EXPECT_EQ(t[0][8], 0) << "(9,6,[SEP]) is cut by [SEP]";
  EXPECT_NE(t[0][1], ngram_buckets(ids, vocab, buckets, 2)[0][1].item<std::int64_t>())
      << "a trigram is not hashed as its leading bigram";
}

// The n-gram hash as the first bundles computed it, on int64 tensors (trigram codes times
// the multiplier wrap around, the shift is arithmetic, the remainder floored). Returns the
// buckets and how many real windows had a negative product.
std::pair<torch::Tensor, std::int64_t> int64_tensor_ngram_buckets(const torch::Tensor& ids, std::int64_t vocab,
                                                                  std::int64_t buckets, int order) {
  torch::Tensor code = ids;
  torch::Tensor real = ids >= kNumSpecial;
  for (int k = 1; k < order; ++k) {
    torch::Tensor next = torch::constant_pad_nd(ids.slice(1, k), {0, k}, kPad);
    if (k > 1) code = code.remainder(2147483647);
    code = code * vocab + next;
    real = real.logical_and(next >= kNumSpecial);
  }
  torch::Tensor mixed = code * std::int64_t{2654435761};
  torch::Tensor hashed = mixed.bitwise_xor(mixed.bitwise_right_shift(29)).remainder(buckets - 1) + 1;
  return {hashed * real, (mixed < 0).logical_and(real).sum().item<std::int64_t>()};
}

TEST(BertNgrams, UnsignedHashKeepsTheBucketsOfExistingBundles) {
  torch::manual_seed(4);
  std::int64_t negative_products = 0;
  for (std::int64_t vocab : {50, 6000, 21000, 60000}) {
    // Real characters, with specials and padding mixed in as in a batch.
    torch::Tensor ids = torch::randint(kNumSpecial, vocab, {16, 40}, torch::kInt64);
    ids.index_put_({torch::indexing::Slice(), 0}, kCls);
    ids.index_put_({torch::indexing::Slice(0, 8), torch::indexing::Slice(30)}, kPad);
    ids.index_put_({3, 7}, kMask);
    for (std::int64_t buckets : {97, 32768, 65536}) {
      for (int order : {2, 3}) {
        auto [want, negative] = int64_tensor_ngram_buckets(ids, vocab, buckets, order);
        negative_products += negative;
        EXPECT_TRUE(torch::equal(ngram_buckets(ids, vocab, buckets, order), want))
            << "vocab " << vocab << ", buckets " << buckets << ", order " << order;
      }
    }
  }
  EXPECT_GT(negative_products, 0) << "the wrapped-around products were not exercised";
}

TEST(BertNgrams, HashOfExtremeIdsStaysInRange) {
  const std::int64_t vocab = std::int64_t{1} << 40, buckets = 1000;
  torch::Tensor ids =
      torch::tensor(std::vector<std::int64_t>{vocab - 1, vocab - 2, vocab - 1, kNumSpecial, vocab - 1}, torch::kInt64)
          .view({1, 5});
  for (int order : {2, 3}) {
    torch::Tensor b = ngram_buckets(ids, vocab, buckets, order);
    EXPECT_GE(b.slice(1, 0, 5 - order + 1).min().item<std::int64_t>(), 1) << "order " << order;
    EXPECT_LT(b.max().item<std::int64_t>(), buckets) << "order " << order;
  }
}

TEST(BertNgrams, TablesStartWithAZeroNoNgramRowAndOthersRandom) {
  // vocab, layers, hidden, heads, ff, max_len, dropouts, bigram and trigram buckets
  const Architecture arch{40, 1, 16, 2, 32, 16, 0.1, 0.1, 64, 32};
  ClassifierModel model(arch, 3, std::make_shared<MaskRng>(1));
  int tables = 0;
  for (const auto& p : model->named_parameters()) {
    if (p.key().find("gram_embedding") == std::string::npos) continue;
    ++tables;
    EXPECT_EQ(p.value()[0].abs().max().item<float>(), 0.0f) << p.key();
    EXPECT_GT(p.value()[1].abs().max().item<float>(), 0.0f) << p.key();
  }
  EXPECT_EQ(tables, 2);
}

TEST(BertPayload, TensorsRoundTripAndCorruptionIsAModelFormatError) {
  const std::string dir = testing::scratch_dir();
  NamedTensors t = {{"a", torch::randn({3, 4})}, {"b", torch::randn({5})}};
  save_tensors(dir + "/w.bin", t);
  NamedTensors into = {{"a", torch::zeros({3, 4})}, {"b", torch::zeros({5})}};
  load_tensors(dir + "/w.bin", into);
  EXPECT_TRUE(torch::equal(into[0].second, t[0].second));
  NamedTensors wrong_shape = {{"a", torch::zeros({4, 3})}, {"b", torch::zeros({5})}};
  EXPECT_THROW(load_tensors(dir + "/w.bin", wrong_shape), ModelFormatError);
  NamedTensors wrong_name = {{"x", torch::zeros({3, 4})}, {"b", torch::zeros({5})}};
  EXPECT_THROW(load_tensors(dir + "/w.bin", wrong_name), ModelFormatError);
  const auto size = std::filesystem::file_size(dir + "/w.bin");
  std::filesystem::resize_file(dir + "/w.bin", size - 7);
  EXPECT_THROW(load_tensors(dir + "/w.bin", into), ModelFormatError);
  testing::write_text(dir + "/junk.bin", "not a payload at all");
  EXPECT_THROW(load_tensors(dir + "/junk.bin", into), ModelFormatError);
}

TEST(BertDropout, KeepsTheExpectationAndIsIdentityInEval) {
  auto rng = std::make_shared<MaskRng>(3);
  FastDropout drop(0.1, rng);
  torch::Tensor x = torch::ones({200000});
  torch::Tensor y = drop(x);
  EXPECT_NEAR((y == 0).to(torch::kFloat).mean().item<double>(), 0.1, 0.005);
  EXPECT_NEAR(y.mean().item<double>(), 1.0, 0.01);
  rng->reseed(3);
  EXPECT_TRUE(torch::equal(drop(x), y)) << "same seed, same mask";
  drop->eval();
  EXPECT_TRUE(torch::equal(drop(x), x));
}

TEST(BertSchedule, WarmsUpLinearlyThenDecaysToZero) {
  EXPECT_NEAR(scheduled_lr(0, 100, 1.0, 0.1), 0.1, 1e-12);
  EXPECT_NEAR(scheduled_lr(9, 100, 1.0, 0.1), 1.0, 1e-12);
  EXPECT_NEAR(scheduled_lr(54, 100, 1.0, 0.1), 0.5, 1e-12);
  EXPECT_NEAR(scheduled_lr(99, 100, 1.0, 0.1), 0.0, 1e-12);
}

TEST(BertNpy, HeaderIsValidNpyV1) {
  torch::Tensor w = torch::rand({2, 3, 4, 4});
  const std::string b =
      npy_bytes(std::vector<float>(w.data_ptr<float>(), w.data_ptr<float>() + w.numel()), {2, 3, 4, 4});
  ASSERT_EQ(b.substr(0, 6), std::string("\x93NUMPY", 6));
  EXPECT_EQ(b[6], 1);
  EXPECT_EQ(b[7], 0);
  const std::size_t header_len = static_cast<unsigned char>(b[8]) | (static_cast<unsigned char>(b[9]) << 8);
  EXPECT_EQ((10 + header_len) % 64, 0u);
  const std::string header = b.substr(10, header_len);
  EXPECT_NE(header.find("'shape': (2, 3, 4, 4)"), std::string::npos) << header;
  EXPECT_NE(header.find("'<f4'"), std::string::npos);
  EXPECT_EQ(header.back(), '\n');
  EXPECT_EQ(b.size(), 10 + header_len + 4 * 96);
  float first;
  std::memcpy(&first, b.data() + 10 + header_len, 4);
  EXPECT_EQ(first, w.flatten()[0].item<float>());
}

// Two classes a tiny model can separate after a few steps.
struct TinyData {
  Dataset train, dev;
  LabelSet labels{{"animals", "vehicles"}};
  TinyData() {
    const std::vector<std::string> a = {"猫狗猫狗", "狗猫兔", "兔兔猫", "猫猫狗兔狗"};
    const std::vector<std::string> b = {"车船车", "船船飞机", "飞机车", "车车船机"};
    for (int i = 0; i < 40; ++i) {
      Dataset& d = i < 32 ? train : dev;
      d.titles.push_back(a[i % 4] + (i % 3 ? "了" : ""));
      d.labels.push_back(0);
      d.titles.push_back(b[i % 4] + (i % 3 ? "了" : ""));
      d.labels.push_back(1);
    }
  }
};

nlohmann::json tiny_config() {
  nlohmann::json c = strip_docs(default_config());
  for (const char* kv : {"layers=1", "hidden=32", "heads=2", "ff=64", "max_len=16", "batch_size=8", "epochs=3",
                         "pretrain_epochs=1", "pretrain_max_steps=4", "lr=0.003", "warmup=0.1", "vocab_min_count=1",
                         "dropout=0.0", "attention_dropout=0.0"}) {
    apply_override(c, kv);
  }
  return c;
}

TrainContext context(const TinyData& d, const std::string& work) {
  TrainContext ctx;
  ctx.train = &d.train;
  ctx.dev = &d.dev;
  ctx.labels = &d.labels;
  ctx.seed = 5;
  ctx.threads = 1;
  ctx.work_dir = work;
  return ctx;
}

std::vector<float> flat_probs(const std::vector<Prediction>& p) {
  std::vector<float> out;
  for (const auto& x : p) out.insert(out.end(), x.probs.begin(), x.probs.end());
  return out;
}

TEST(BertClassifier, TrainSaveLoadPredictRoundTrip) {
  const std::string dir = testing::scratch_dir();
  TinyData data;
  auto model = make_classifier();
  model->configure(tiny_config());
  const nlohmann::json facts = model->train(context(data, dir + "/work"));
  EXPECT_GT(facts.at("train_titles_per_s").get<double>(), 0);
  EXPECT_EQ(facts.at("steps").get<int>(), 24);
  EXPECT_EQ(facts.at("pretrain_steps").get<int>(), 4);

  const std::vector<Prediction> before = model->predict_batch(data.dev.titles);
  ASSERT_EQ(before.size(), data.dev.size());
  std::size_t correct = 0;
  for (std::size_t i = 0; i < before.size(); ++i) {
    correct += before[i].label == data.dev.labels[i];
    float sum = 0;
    for (float p : before[i].probs) sum += p;
    EXPECT_NEAR(sum, 1.0f, 1e-5);
    EXPECT_FLOAT_EQ(before[i].score, before[i].probs[before[i].label]);
  }
  EXPECT_GE(correct, before.size() * 9 / 10) << "a tiny model should separate two alphabets";

  {
    BundleWriter writer(dir + "/bundle");
    model->save(writer);
    Manifest m;
    m.family = "bert";
    m.labels = data.labels.names;
    m.config = model->config();
    writer.commit(m);
  }
  auto loaded = load_classifier(dir + "/bundle");
  EXPECT_EQ(flat_probs(loaded->predict_batch(data.dev.titles)), flat_probs(before));
  EXPECT_TRUE(loaded->predict_batch({}).empty());

  // A batch split over threads (each part its own forward pass) answers as one pass does.
  const std::vector<Prediction> one_thread = loaded->predict_batch(data.train.titles);  // 64: 3 parts
  loaded->set_threads(3);
  // --threads reaches OpenBLAS's own pool (the F32 GEMMs); LibTorch's stays capped by max_threads.
  const char* user_blas_threads = std::getenv("OPENBLAS_NUM_THREADS");
  if (openblas_get_num_threads != nullptr && (user_blas_threads == nullptr || *user_blas_threads == '\0')) {
    EXPECT_EQ(openblas_get_num_threads(), 3);
  }
  EXPECT_EQ(at::get_num_threads(), 1);
  const std::vector<Prediction> split = loaded->predict_batch(data.train.titles);
  ASSERT_EQ(split.size(), one_thread.size());
  for (std::size_t i = 0; i < split.size(); ++i) {
    EXPECT_EQ(split[i].label, one_thread[i].label) << i;
    for (std::size_t c = 0; c < split[i].probs.size(); ++c)
      EXPECT_NEAR(split[i].probs[c], one_thread[i].probs[c], 1e-6);
  }
  loaded->set_threads(1);

  loaded->dump_attention({data.dev.titles[0]}, 7, dir + "/attention", {});
  EXPECT_TRUE(std::filesystem::exists(dir + "/attention/7.npy"));
  const auto j = nlohmann::json::parse(std::ifstream(dir + "/attention/7.json"));
  EXPECT_EQ(j.at("tokens").front(), "[CLS]");
  EXPECT_EQ(j.at("weights").size(), 1u);     // layers
  EXPECT_EQ(j.at("weights")[0].size(), 2u);  // heads
  EXPECT_EQ(j.at("weights")[0][0].size(), j.at("tokens").size());
}

// The smallest learning rate, too small to move dev: every epoch after the first is a bad one.
nlohmann::json facts_with_patience_one(int epochs, const std::string& work) {
  TinyData data;
  nlohmann::json c = tiny_config();
  for (const std::string& kv :
       std::vector<std::string>{"pretrain_epochs=0", "lr=1e-7", "patience=1", "epochs=" + std::to_string(epochs)}) {
    apply_override(c, kv);
  }
  auto model = make_classifier();
  model->configure(c);
  return model->train(context(data, work));
}

TEST(BertClassifier, PatienceSpentOnTheLastEpochIsNoEarlyStop) {
  const std::string dir = testing::scratch_dir();
  const nlohmann::json whole = facts_with_patience_one(2, dir + "/two");
  EXPECT_EQ(whole.at("epochs_run"), 2);
  EXPECT_EQ(whole.at("early_stopped"), false);
  const nlohmann::json cut = facts_with_patience_one(3, dir + "/three");
  EXPECT_EQ(cut.at("epochs_run"), 2);
  EXPECT_EQ(cut.at("early_stopped"), true);
}

TEST(BertClassifier, DeterministicUnderASeedAndResumesFromItsCheckpoint) {
  const std::string dir = testing::scratch_dir();
  TinyData data;
  nlohmann::json config = tiny_config();
  apply_override(config, "dropout=0.1");
  apply_override(config, "bigram_buckets=64");  // its lazy AdamW state is checkpointed too
  auto first = make_classifier();
  first->configure(config);
  first->train(context(data, dir + "/a"));
  auto second = make_classifier();
  second->configure(config);
  second->train(context(data, dir + "/b"));
  const std::vector<float> p1 = flat_probs(first->predict_batch(data.dev.titles));
  EXPECT_EQ(flat_probs(second->predict_batch(data.dev.titles)), p1);

  // A resumed run with every epoch already checkpointed restores the same model.
  auto resumed = make_classifier();
  resumed->configure(config);
  TrainContext ctx = context(data, dir + "/a");
  ctx.resume = true;
  resumed->train(ctx);
  EXPECT_EQ(flat_probs(resumed->predict_batch(data.dev.titles)), p1);
}

TEST(BertClassifier, ResumeFallsBackToThePreviousCheckpointAfterACrashBetweenItsRenames) {
  namespace fs = std::filesystem;
  const std::string dir = testing::scratch_dir(), work = dir + "/work";
  TinyData data;
  auto first = make_classifier();
  first->configure(tiny_config());
  first->train(context(data, work));
  const std::vector<float> p1 = flat_probs(first->predict_batch(data.dev.titles));
  // What a crash between "current -> .old" and ".tmp -> current" leaves on disk.
  fs::rename(work + "/bert_checkpoint", work + "/bert_checkpoint.old");
  fs::create_directories(work + "/bert_checkpoint.tmp");
  testing::write_text(work + "/bert_checkpoint.tmp/state.bin", "half written");
  ASSERT_TRUE(has_checkpoint(work));

  // Seeded differently, a run that started over would end elsewhere; resumed from the
  // previous checkpoint (all 3 epochs done) it is the first run's model.
  auto resumed = make_classifier();
  resumed->configure(tiny_config());
  TrainContext ctx = context(data, work);
  ctx.seed = 6;
  ctx.resume = true;
  EXPECT_EQ(resumed->train(ctx).at("history").size(), 3u);
  EXPECT_EQ(flat_probs(resumed->predict_batch(data.dev.titles)), p1);

  // One more epoch from there writes a current checkpoint and only then drops the old one.
  nlohmann::json more = tiny_config();
  apply_override(more, "epochs=4");
  auto longer = make_classifier();
  longer->configure(more);
  EXPECT_EQ(longer->train(ctx).at("history").size(), 4u);
  EXPECT_TRUE(fs::exists(work + "/bert_checkpoint/state.bin"));
  EXPECT_FALSE(fs::exists(work + "/bert_checkpoint.old"));
  EXPECT_FALSE(fs::exists(work + "/bert_checkpoint.tmp"));
}

TEST(BertClassifier, RejectsUnknownKeysAndBadValues) {
  auto model = make_classifier();
  nlohmann::json c = tiny_config();
  c["no_such_key"] = 1;
  EXPECT_THROW(model->configure(c), ConfigError);
  c = tiny_config();
  c["heads"] = 3;  // 32 is not a multiple of 3
  EXPECT_THROW(model->configure(c), ConfigError);
  EXPECT_THROW(model->predict_batch({"x"}), UsageError);
}

TEST(BertClassifier, PretrainedEncoderBundleInitialisesFineTuning) {
  const std::string dir = testing::scratch_dir();
  TinyData data;
  PretrainContext req;
  req.config = tiny_config();
  req.train = &data.train;
  req.labels = &data.labels;
  req.out_dir = dir + "/encoder";
  const nlohmann::json facts = pretrain_encoder_bundle(req);
  EXPECT_EQ(facts.at("pretrain_steps").get<int>(), 4);
  EXPECT_EQ(Bundle::open(dir + "/encoder").manifest().family, kEncoderFamily);

  auto model = make_classifier();
  nlohmann::json c = tiny_config();
  apply_override(c, "hidden=16");  // the encoder fixes the architecture: refused, not ignored
  model->configure(c);
  TrainContext ctx = context(data, "");
  ctx.init_dir = dir + "/encoder";
  EXPECT_THROW(model->train(ctx), ConfigError);
  model = make_classifier();
  model->configure(tiny_config());
  EXPECT_EQ(model->train(ctx).at("init_dir"), dir + "/encoder");
  EXPECT_EQ(model->config().at("hidden"), 32);
  ctx.init_dir = dir;  // not a bundle
  EXPECT_THROW(model->train(ctx), ModelFormatError);
}

// A loss that turns NaN (a distillation teacher weighted nan did) stops fine-tuning with an
// error, instead of training on and saving weights that answer NaN.
TEST(BertFineTune, ANonFiniteLossStopsTraining) {
  Settings o = parse_settings(settings_table().defaults());
  o.arch.vocab_size = 30;
  o.arch.layers = 1;
  o.arch.hidden = 8;
  o.arch.heads = 2;
  o.arch.ff = 16;
  o.arch.bigram_buckets = 0;
  o.batch_size = 2;
  o.epochs = 1;
  o.join_prob = 0;
  const Encoded train = {{5, 6, 7}, {8, 9}, {10, 11, 12}, {13}};
  const std::vector<int> train_labels = {0, 1, 0, 1};
  const LabelSet labels{{"a", "b"}};
  auto rng = std::make_shared<MaskRng>(1);
  FineTuneJob job;
  job.train = &train;
  job.train_labels = &train_labels;
  job.labels = &labels;
  job.loss = [](ClassifierModel& m, const Batch& b) { return m(b.ids, b.key_valid).sum() * std::nan(""); };
  try {
    fine_tune(ClassifierModel(o.arch, 2, rng), rng, o, job);
    ADD_FAILURE() << "a NaN loss trained on";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("diverged"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace newscls::bert
