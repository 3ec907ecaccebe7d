// int8 quantisation of bert bundles: per-row rounding, the int8 GEMM of one layer and of a
// whole tiny model against F32 (tolerances stated below), the payload's refusals, and
// quantised bundles (own and imported from Hugging Face) that save, load and predict.
#include <algorithm>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "bert/bert.h"
#include "bert/compress/compress.h"
#include "bert/compress/quantize.h"
#include "bert/kernels/quantized_linear.h"
#include "bert/model/encoder.h"
#include "bert/model/tensor_io.h"
#include "newscls/core/bundle.h"
#include "newscls/core/config.h"
#include "newscls/core/error.h"
#include "newscls/workflow/registry.h"
#include "unit/bert/tiny_arch.h"
#include "unit/test_hf_support.h"
#include "unit/test_support.h"

namespace newscls::bert {
namespace {

// Stated tolerances. Weights round to max|row|/254 at most, activations to 1/510 of their
// range: one layer's outputs stay within 2% of their largest magnitude, and a whole model's
// probabilities within 0.02 (with labels agreeing on at least 95% of the titles).
constexpr double kLayerRelTolerance = 0.02;
constexpr double kProbTolerance = 0.02;
constexpr double kAgreement = 0.95;

// Weights large enough that the classes are far from uniform (init_bert_weights' 0.02 would
// make every probability close to 1/5 and the comparison trivial).
ClassifierModel tiny_model(std::uint64_t seed) {
  torch::manual_seed(seed);
  ClassifierModel m(tiny_test_arch(), 5, std::make_shared<MaskRng>(seed));
  torch::NoGradGuard no_grad;
  for (auto& p : m->named_parameters()) {
    if (p.value().dim() == 2) p.value().normal_(0.0, 0.1);
  }
  m->eval();
  return m;
}

std::vector<std::string> names_in(const Int8Layout& layout) {
  return {layout.int8_names.begin(), layout.int8_names.end()};
}

TEST(BertQuantize, RowsRoundWithinHalfAStep) {
  torch::manual_seed(3);
  torch::Tensor w = torch::randn({6, 9});
  w[2].zero_();
  const Int8Rows q = quantize_rows(w);
  EXPECT_EQ(q.values.scalar_type(), torch::kInt8);
  EXPECT_EQ(q.values.abs().amax(1)[0].item<int>(), 127);  // the row's largest value uses the full range
  const torch::Tensor err = (dequantize_rows(q) - w).abs().amax(1);
  EXPECT_TRUE((err <= q.scales * 0.5 + 1e-7).all().item<bool>()) << err;
  EXPECT_EQ(dequantize_rows(q)[2].abs().sum().item<float>(), 0.0f);
}

TEST(BertQuantize, Int8LinearStaysNearF32AndIsUsedWhenAttached) {
  torch::manual_seed(4);
  torch::nn::Linear layer(48, 24);
  torch::NoGradGuard no_grad;
  layer->bias.normal_(0.0, 0.5);
  const torch::Tensor x = torch::randn({3, 7, 48});
  const torch::Tensor f32 = layer(x);
  select_int8_engine("onednn");  // before attaching: the weights are prepacked for the engine
  attach_int8_linears(*layer, {{"weight", quantize_rows(layer->weight)}});
  const torch::Tensor int8 = run_linear(layer, x);
  ASSERT_EQ(int8.sizes(), f32.sizes());
  const double diff = (int8 - f32).abs().max().item<double>();
  EXPECT_LE(diff, kLayerRelTolerance * f32.abs().max().item<double>());
  EXPECT_GT(diff, 0.0) << "the int8 twin should round; identical output means it was not used";
}

TEST(BertQuantize, TinyModelProbabilitiesStayNearF32) {
  const std::string dir = testing::scratch_dir();
  ClassifierModel f32 = tiny_model(7);
  const nlohmann::json settings = strip_docs(quantize_defaults());
  const Int8Layout layout = int8_layout_for(*f32, settings);
  // Every Linear (4 per attention, 2 feed-forward per layer, pooler, classifier) and table.
  EXPECT_EQ(layout.int8_names.size(), 2u * 6 + 2 + 3) << ::testing::PrintToString(names_in(layout));
  save_int8_weights(dir + "/w.bin", *f32, layout);
  ClassifierModel int8 = tiny_model(8);
  EXPECT_EQ(load_int8_weights(dir + "/w.bin", *int8).int8_names, layout.int8_names);

  torch::manual_seed(9);
  const torch::Tensor ids = torch::randint(5, 40, {64, 10}, torch::kInt64);
  const torch::Tensor valid = torch::ones({64, 10}, torch::kBool);
  c10::InferenceMode guard;
  const torch::Tensor a = torch::softmax(f32(ids, valid), 1);
  const torch::Tensor b = torch::softmax(int8(ids, valid), 1);
  EXPECT_GT(a.max().item<double>(), 0.3) << "the test model should be far from uniform (0.2)";
  const double diff = (a - b).abs().max().item<double>();
  std::cout << "tiny model: probabilities max abs diff " << diff << ", largest probability " << a.max().item<double>()
            << "\n";
  EXPECT_LE(diff, kProbTolerance);
  EXPECT_GT(diff, 0.0);
  EXPECT_GE(a.argmax(1).eq(b.argmax(1)).to(torch::kFloat64).mean().item<double>(), kAgreement);
}

std::string expect_refused(const std::string& path, ClassifierModel& model) {
  try {
    load_int8_weights(path, *model);
  } catch (const ModelFormatError& e) {
    EXPECT_TRUE(testing::one_line_naming(e.what(), path)) << e.what();
    return e.what();
  }
  ADD_FAILURE() << path << " was accepted";
  return "";
}

TEST(BertQuantize, CorruptTruncatedOrForeignPayloadIsRefusedNamingTheFile) {
  const std::string dir = testing::scratch_dir();
  ClassifierModel model = tiny_model(1);
  const std::string good = dir + "/weights.int8.bin";
  save_int8_weights(good, *model, int8_layout_for(*model, strip_docs(quantize_defaults())));
  std::ifstream in(good, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());

  testing::write_text(dir + "/truncated.bin", bytes.substr(0, bytes.size() / 2));
  expect_refused(dir + "/truncated.bin", model);
  std::string version = bytes;
  version[4] = 2;
  testing::write_text(dir + "/version.bin", version);
  EXPECT_NE(expect_refused(dir + "/version.bin", model).find("version"), std::string::npos);
  std::string magic = bytes;
  magic[3] = 'W';
  testing::write_text(dir + "/magic.bin", magic);
  expect_refused(dir + "/magic.bin", model);
  testing::write_text(dir + "/f32.bin", bytes + "x");
  expect_refused(dir + "/f32.bin", model);
  // A model of another shape: the payload does not fit it.
  Architecture wider = tiny_test_arch();
  wider.hidden = 48;
  ClassifierModel other(wider, 5, std::make_shared<MaskRng>(1));
  EXPECT_NE(expect_refused(good, other).find("shape"), std::string::npos);
}

// Two classes a tiny model separates in a few steps: titles drawn from two alphabets.
struct TinyData {
  Dataset train, dev;
  LabelSet labels{{"land", "water"}};
  TinyData() {
    const std::vector<std::string> alphabets[2] = {{"山", "石", "林", "田", "土"}, {"河", "湖", "海", "浪", "鱼"}};
    for (int i = 0; i < 96; ++i) {
      Dataset& d = i < 64 ? train : dev;
      const int label = i % 2;
      std::string title;
      for (int k = 0; k < 3 + i % 4; ++k) title += alphabets[label][(i * 7 + k * 3) % 5];
      d.titles.push_back(title);
      d.labels.push_back(label);
    }
  }
};

void commit(Classifier& model, const std::string& dir, const std::vector<std::string>& labels) {
  BundleWriter writer(dir);
  model.save(writer);
  Manifest m;
  m.family = model.family();
  m.labels = labels;
  m.config = model.config();
  writer.commit(m);
}

CompressContext quantize_request(const std::string& from, const std::string& to, const Dataset* dev) {
  CompressContext r;
  r.method = "quantize";
  r.model_dir = from;
  r.out_dir = to;
  r.dev = dev;
  return r;
}

double max_prob_diff(const std::vector<Prediction>& a, const std::vector<Prediction>& b) {
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    for (std::size_t c = 0; c < a[i].probs.size(); ++c)
      d = std::max<double>(d, std::abs(a[i].probs[c] - b[i].probs[c]));
  }
  return d;
}

// Quantises the bundle at `f32`, checks the new bundle against it and that it saves again.
void check_quantised_bundle(const std::string& f32, const std::string& dir, const std::vector<std::string>& titles) {
  const nlohmann::json facts = compress_bundle(quantize_request(f32, dir + "/int8", nullptr));
  EXPECT_EQ(facts.at("parameters_after"), facts.at("parameters_before"));
  EXPECT_EQ(facts.at("settings").at("engine"), "onednn");
  const Bundle bundle = Bundle::open(dir + "/int8");
  EXPECT_TRUE(has_int8_weights(bundle));
  EXPECT_EQ(bundle.manifest().payloads.count("weights.bin"), 0u);
  EXPECT_LT(std::filesystem::file_size(bundle.payload_path(kInt8Payload)),
            std::filesystem::file_size(Bundle::open(f32).payload_path("weights.bin")) / 2);

  auto original = load_classifier(f32);
  auto int8 = load_classifier(dir + "/int8");
  const std::vector<Prediction> a = original->predict_batch(titles), b = int8->predict_batch(titles);
  std::cout << "bundle: probabilities max abs diff " << max_prob_diff(a, b) << "\n";
  EXPECT_LE(max_prob_diff(a, b), kProbTolerance);
  EXPECT_EQ(int8->embed({titles[0]}).at(0).cls.size(), original->embed({titles[0]}).at(0).cls.size());
  int8->dump_attention({titles[0]}, 0, dir + "/attention", {});
  EXPECT_TRUE(std::filesystem::exists(dir + "/attention/0.npy"));

  commit(*int8, dir + "/again", bundle.manifest().labels);  // a loaded int8 model saves as int8
  EXPECT_TRUE(has_int8_weights(Bundle::open(dir + "/again")));
  const std::vector<Prediction> c = load_classifier(dir + "/again")->predict_batch(titles);
  EXPECT_EQ(max_prob_diff(b, c), 0.0);
  EXPECT_THROW(compress_bundle(quantize_request(dir + "/int8", dir + "/twice", nullptr)), UsageError);
}

TEST(BertQuantize, OwnBundleSavesLoadsAndPredicts) {
  const std::string dir = testing::scratch_dir();
  TinyData data;
  auto model = make_classifier();
  nlohmann::json c = strip_docs(default_config());
  for (const char* kv : {"layers=1", "hidden=32", "heads=2", "ff=64", "max_len=16", "batch_size=8", "epochs=5",
                         "pretrain_epochs=0", "lr=0.003", "vocab_min_count=1", "bigram_buckets=64"}) {
    apply_override(c, kv);
  }
  model->configure(c);
  TrainContext ctx;
  ctx.train = &data.train;
  ctx.dev = &data.dev;
  ctx.labels = &data.labels;
  ctx.seed = 5;
  model->train(ctx);
  commit(*model, dir + "/f32", data.labels.names);
  check_quantised_bundle(dir + "/f32", dir, data.dev.titles);
  // Trained again after loading the int8 bundle (as `adapt` does), it saves re-quantised.
  auto retrained = load_classifier(dir + "/int8");
  retrained->train(ctx);
  commit(*retrained, dir + "/retrained", data.labels.names);
  const Bundle again = Bundle::open(dir + "/retrained");
  EXPECT_TRUE(has_int8_weights(again));
  EXPECT_EQ(again.manifest().payloads.count("weights.bin"), 0u);
  const std::vector<Prediction> trained = retrained->predict_batch(data.dev.titles);
  EXPECT_LE(max_prob_diff(trained, load_classifier(dir + "/retrained")->predict_batch(data.dev.titles)),
            kProbTolerance);
  EXPECT_THROW(compress_bundle([&] {
                 CompressContext r = quantize_request(dir + "/f32", dir + "/bad", nullptr);
                 r.overrides = {"no_such_key=1"};
                 return r;
               }()),
               ConfigError);
}

TEST(BertQuantize, ImportedHuggingFaceBundleSavesLoadsAndPredicts) {
  const std::string dir = testing::scratch_dir();
  // A checkpoint folder as save_pretrained writes it, with the vocabulary beside it.
  testing::copy_tiny_hf_classifier(dir + "/hf");
  ImportContext import{kHuggingFaceFormat, dir + "/hf", dir + "/f32"};
  import_hf_bundle(import);
  check_quantised_bundle(dir + "/f32", dir, {"ＮＢＡ总决赛今晚开打", "央行宣布降准", "新款手机发布"});
}

}  // namespace
}  // namespace newscls::bert
