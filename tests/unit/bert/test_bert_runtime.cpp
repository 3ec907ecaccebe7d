// The inference runtime's forward pass (src/bert/runtime/) against the LibTorch model it
// replaces, on every kind of bert model: tiny random ones of each architecture (n-gram tables,
// token types, pruned layers, no pooler), an int8 one, the fixture bundles of every kind
// (tests/fixtures/bundles_v1), and the tiny Hugging Face classifier against transformers'
// logits (tests/fixtures/hf/golden.jsonl). Float: probabilities within 1e-5 of LibTorch's.
// Int8: both run the same int8 GEMM on the same int8 rows, but the activations are quantised per
// call, so a float ulp upstream can move a value by one int8 step: within the tolerance the int8
// bundles' own test states against float (0.02). Logits within 1e-4 of transformers'.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "bert/kernels/int8_rows.h"
#include "bert/model/encoder.h"
#include "bert/model/int8_payload.h"
#include "bert/model/settings.h"
#include "bert/model/tensor_io.h"
#include "bert/runtime/inference_model.h"
#include "bert/model/state_payload.h"
#include "bert/tokens/batching.h"
#include "bert/tokens/title_tokenizer.h"
#include "bert/train/hf_import.h"
#include "newscls/core/bundle.h"
#include "newscls/core/error.h"
#include "unit/bert/tiny_arch.h"
#include "unit/test_hf_support.h"
#include "unit/test_support.h"

namespace newscls::bert {
namespace {

constexpr double kFloatTolerance = 1e-5;
constexpr double kHiddenTolerance = 1e-4;  // LayerNorm outputs are O(1): a few float ulps of them
constexpr double kGoldenTolerance = 1e-4;
constexpr double kInt8Tolerance = 0.02;  // test_bert_quantize.cpp's kProbTolerance

Architecture arch_with(std::int64_t bigrams, std::int64_t trigrams, std::int64_t types,
                       std::vector<std::int64_t> heads_per_layer, bool pooler) {
  Architecture a = tiny_test_arch();
  a.bigram_buckets = bigrams;
  a.trigram_buckets = trigrams;
  a.type_vocab_size = types;
  a.layer_norm_eps = 1e-5;
  a.heads_per_layer = std::move(heads_per_layer);
  a.pooler = pooler;
  return a;
}

// Weights large enough that the classes are far from uniform, norms away from 1 and 0.
ClassifierModel random_model(const Architecture& arch, std::int64_t classes, std::uint64_t seed) {
  torch::manual_seed(seed);
  ClassifierModel m(arch, classes, std::make_shared<MaskRng>(seed));
  torch::NoGradGuard no_grad;
  for (auto& p : m->named_parameters()) p.value().normal_(p.value().dim() == 2 ? 0.0 : 0.5, 0.2);
  m->eval();
  return m;
}

// Titles of 1 to 12 ids ([CLS] ... [SEP]), real characters and specials mixed, padded in batches.
Encoded random_titles(std::int64_t vocab, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Encoded out;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::int64_t> ids{kCls};
    const std::size_t len = i % 11;
    for (std::size_t k = 0; k < len; ++k)
      ids.push_back(k % 7 == 3 ? kUnk
                               : kNumSpecial + static_cast<std::int64_t>(
                                                   rng() % static_cast<std::uint64_t>(vocab - kNumSpecial)));
    ids.push_back(kSep);
    out.push_back(ids);
  }
  out.push_back({kCls});  // a lone [CLS]
  return out;
}

std::vector<std::size_t> all_rows(const Encoded& e) {
  std::vector<std::size_t> rows(e.size());
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
  return rows;
}

double max_diff(const torch::Tensor& expected, const runtime::Matrix& got) {
  const torch::Tensor e = expected.contiguous().reshape({-1});
  EXPECT_EQ(e.numel(), static_cast<std::int64_t>(got.values.size()));
  double worst = 0;
  for (std::int64_t i = 0; i < e.numel(); ++i) {
    worst =
        std::max(worst, std::abs(static_cast<double>(e[i].item<float>()) - got.values[static_cast<std::size_t>(i)]));
  }
  return worst;
}

// The model's state through the float payload, as a bundle holds it.
std::vector<NamedArray> float_state(const ClassifierModel& model, const Architecture& arch, std::int64_t classes,
                                    const std::string& name) {
  const std::string path = testing::scratch_dir() + "/" + name + ".bin";
  save_tensors(path, named_state(*model));
  return read_float_state(path, expected_state(arch, classes));
}

// Probabilities, [CLS] hidden vectors, full hidden states and attention weights of LibTorch's
// model and the runtime's, compared.
void expect_same_forward(ClassifierModel& model, const runtime::InferenceModel& rt, const Encoded& titles,
                         bool classify, bool int8 = false) {
  const double tolerance = int8 ? kInt8Tolerance : kFloatTolerance;
  const double hidden_tolerance = int8 ? kInt8Tolerance : kHiddenTolerance;
  const std::vector<std::size_t> rows = all_rows(titles);
  const Batch batch = make_batch(titles, rows, nullptr);
  const runtime::PaddedBatch padded = runtime::pad_titles(titles, rows);
  torch::NoGradGuard no_grad;
  if (classify) {
    const torch::Tensor probs = torch::softmax(model(batch.ids, batch.key_valid), 1);
    const double diff = max_diff(probs, rt.probs(padded));
    std::cout << "probabilities max abs diff " << diff << "\n";
    EXPECT_LE(diff, tolerance);
  }
  const EncoderOutput full = model->encoder->forward(batch.ids, batch.key_valid, /*keep_weights=*/true);
  const runtime::EncoderPass pass = rt.encode(padded, /*keep_weights=*/true, /*cls_only=*/false);
  EXPECT_LE(max_diff(full.hidden, pass.hidden), hidden_tolerance);
  ASSERT_EQ(pass.weights.size(), full.weights.size());
  for (std::size_t l = 0; l < full.weights.size(); ++l) {
    EXPECT_LE(max_diff(full.weights[l], pass.weights[l]), tolerance) << "layer " << l;
  }
  const torch::Tensor cls = model->encoder->forward(batch.ids, batch.key_valid, false, true).hidden.select(1, 0);
  const runtime::Matrix rt_cls = rt.cls(rt.encode(padded, false, /*cls_only=*/true), padded);
  EXPECT_LE(max_diff(cls, rt_cls), hidden_tolerance);
  if (rt.has_pooler()) {
    EXPECT_LE(max_diff(model->pooled(cls), rt.pooled(rt_cls)), tolerance);
  }
}

struct Kind {
  const char* name;
  Architecture arch;
  std::int64_t classes;
};

TEST(BertRuntime, FloatForwardMatchesLibTorchOnEveryArchitecture) {
  const std::vector<Kind> kinds = {
      {"bigrams", arch_with(64, 0, 0, {}, true), 5},
      {"bigrams_trigrams_types", arch_with(64, 97, 2, {}, true), 7},
      {"pruned", arch_with(64, 0, 0, {1, 3}, true), 5},
      {"pruned_second_layer", arch_with(0, 0, 0, {4, 2}, true), 3},
      {"encoder_without_pooler", arch_with(0, 0, 2, {}, false), 0},
  };
  std::uint64_t seed = 11;
  for (const Kind& k : kinds) {
    SCOPED_TRACE(k.name);
    ClassifierModel model = random_model(k.arch, k.classes, ++seed);
    const runtime::InferenceModel rt(k.arch, k.classes, float_state(model, k.arch, k.classes, k.name));
    expect_same_forward(model, rt, random_titles(k.arch.vocab_size, 37, seed), k.classes > 0);
  }
}

TEST(BertRuntime, Int8ForwardMatchesLibTorchInt8AndStaysNearFloat) {
  const Architecture arch = arch_with(64, 0, 0, {}, true);
  ClassifierModel model = random_model(arch, 5, 21);
  const Encoded titles = random_titles(arch.vocab_size, 90, 21);  // more than one 64-row tile
  const runtime::InferenceModel f32(arch, 5, float_state(model, arch, 5, "int8_source"));
  Int8Layout layout{"onednn", {}};
  for (const auto& [name, t] : named_state(*model)) {
    if (t.dim() == 2) layout.int8_names.insert(name);  // every Linear and every table
  }
  const std::string dir = testing::scratch_dir();
  const std::string path = dir + "/int8.bin";
  save_int8_weights(path, *model, layout);
  ClassifierModel q8(arch, 5, std::make_shared<MaskRng>(1));
  load_int8_weights(path, *q8);
  q8->eval();
  const Int8State state = read_int8_state(path, expected_state(arch, 5));
  EXPECT_EQ(state.engine, "onednn");
  const runtime::InferenceModel rt(arch, 5, state.tensors);
  const std::vector<std::size_t> rows = all_rows(titles);
  const Batch batch = make_batch(titles, rows, nullptr);
  torch::NoGradGuard no_grad;
  const torch::Tensor torch_q8 = torch::softmax(q8(batch.ids, batch.key_valid), 1);
  const runtime::Matrix rt_q8 = rt.probs(runtime::pad_titles(titles, rows));
  std::cout << "int8: probabilities max abs diff " << max_diff(torch_q8, rt_q8) << "\n";
  EXPECT_LE(max_diff(torch_q8, rt_q8), kInt8Tolerance);
  // As the int8 bundles' own test states: within 0.02 of float.
  EXPECT_LE(max_diff(torch::softmax(model(batch.ids, batch.key_valid), 1), rt_q8), 0.02);
  EXPECT_GT(max_diff(torch_q8, f32.probs(runtime::pad_titles(titles, rows))), 0.0);  // int8 ran

  // Written back unchanged: the same bytes as read.
  const std::string again = dir + "/int8_again.bin";
  write_int8_state(again, state);
  std::ifstream a(path, std::ios::binary), b(again, std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(a), {}), std::string(std::istreambuf_iterator<char>(b), {}));
}

// A fixture bundle loaded as the LibTorch classifier loaded it, against the runtime.
void check_fixture_bundle(const std::string& name) {
  SCOPED_TRACE(name);
  const Bundle bundle = Bundle::open(testing::source_dir() + "/tests/fixtures/bundles_v1/bundles/" + name);
  Settings o = parse_settings(bundle.manifest().config);
  TitleTokenizer vocab = TitleTokenizer::load(bundle, o.tokenizer);
  o.arch.vocab_size = std::max(o.arch.vocab_size, vocab.size());
  vocab.set_fold_punctuation(o.fold_punctuation);
  const auto classes = static_cast<std::int64_t>(bundle.manifest().labels.size());
  ClassifierModel model(o.arch, classes, std::make_shared<MaskRng>(1));
  const std::vector<TensorSpec> specs = expected_state(o.arch, classes);
  std::vector<NamedArray> state;
  if (has_int8_weights(bundle)) {
    load_int8_weights(bundle.payload_path(kInt8Payload), *model);
    state = read_int8_state(bundle.payload_path(kInt8Payload), specs).tensors;
  } else {
    load_tensors(bundle.payload_path("weights.bin"), named_state(*model));
    state = read_float_state(bundle.payload_path("weights.bin"), specs);
  }
  model->eval();
  const runtime::InferenceModel rt(o.arch, classes, state);
  std::ifstream in(testing::source_dir() + "/tests/fixtures/bundles_v1/titles.txt");
  std::vector<std::string> titles;
  for (std::string line; std::getline(in, line);) titles.push_back(line);
  ASSERT_GT(titles.size(), 100u);
  expect_same_forward(model, rt, encode_titles(vocab, titles, o.arch.max_len), true, has_int8_weights(bundle));
}

TEST(BertRuntime, FixtureBundlesOfEveryKindMatchLibTorch) {
  for (const char* name : {"bert", "bert-int8", "bert-pruned", "bert-distilled", "bert-hf"}) check_fixture_bundle(name);
}

TEST(BertRuntime, TinyHuggingFaceClassifierMatchesTransformers) {
  const std::string hf = testing::hf_fixture("");
  const std::string dir = testing::scratch_dir() + "/hf_tiny_cls";
  std::filesystem::remove_all(dir);
  testing::copy_tiny_hf_classifier(dir);
  const hf::BertCheckpoint ck = hf::load_bert_checkpoint(dir);
  const Architecture arch = architecture_of(ck, 64);
  ClassifierModel model(arch, 10, std::make_shared<MaskRng>(1));
  copy_checkpoint_weights(ck, *model, false);
  const runtime::InferenceModel rt(arch, 10, float_state(model, arch, 10, "hf_tiny_cls"));
  std::ifstream golden(hf + "golden.jsonl");
  Encoded encoded;
  std::vector<std::vector<float>> logits;
  for (std::string line; std::getline(golden, line);) {
    const auto j = nlohmann::json::parse(line);
    encoded.push_back(ck.tokenizer.encode(j["text"].get<std::string>(), 64));
    logits.push_back(j["logits"].get<std::vector<float>>());
  }
  ASSERT_EQ(encoded.size(), 200u);
  const runtime::PaddedBatch batch = runtime::pad_titles(encoded, all_rows(encoded));
  const runtime::Matrix got = rt.logits(rt.cls(rt.encode(batch, false, true), batch));
  double worst = 0;
  for (std::size_t i = 0; i < encoded.size(); ++i) {
    for (std::size_t k = 0; k < 10; ++k) {
      worst = std::max(worst, std::abs(static_cast<double>(got.row(static_cast<std::int64_t>(i))[k]) - logits[i][k]));
    }
  }
  EXPECT_LT(worst, kGoldenTolerance);
}

TEST(BertRuntime, PayloadThatDoesNotFitIsRefusedNamingTheFile) {
  const Architecture arch = arch_with(64, 0, 0, {}, true);
  ClassifierModel model = random_model(arch, 5, 3);
  const std::string path = testing::scratch_dir() + "/fit.bin";
  save_tensors(path, named_state(*model));
  Architecture wider = arch;
  wider.ff = 48;
  try {
    read_float_state(path, expected_state(wider, 5));
    ADD_FAILURE() << "a payload of another shape was read";
  } catch (const ModelFormatError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_float_state(path, expected_state(arch, 4)), ModelFormatError);
  EXPECT_THROW(read_int8_state(path, expected_state(arch, 5)), ModelFormatError);
}

}  // namespace
}  // namespace newscls::bert
