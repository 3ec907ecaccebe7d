// The bert family's side of Hugging Face checkpoints: the new architecture options leave own
// models (and so old bundles) as they were, freezing stops gradients where it should, the
// WordPiece vocabulary survives a bundle, and the imported tiny classifier computes the
// logits transformers computed (tests/fixtures/hf/golden.jsonl).
#include <cmath>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "bert/model/encoder.h"
#include "bert/model/settings.h"
#include "bert/model/tensor_io.h"
#include "bert/tokens/batching.h"
#include "bert/tokens/title_tokenizer.h"
#include "bert/train/hf_import.h"
#include "newscls/core/config.h"
#include "newscls/core/error.h"
#include "unit/test_hf_support.h"
#include "unit/test_support.h"

namespace newscls::bert {
namespace {

Architecture small_arch() {
  Settings o = parse_settings(settings_table().defaults());
  o.arch.vocab_size = 50;
  o.arch.layers = 2;
  o.arch.hidden = 16;
  o.arch.heads = 2;
  o.arch.ff = 32;
  o.arch.bigram_buckets = 0;
  return o.arch;
}

TEST(BertHfOptions, ConfigWithoutTheNewKeysKeepsTheOwnArchitecture) {
  nlohmann::json old = settings_table().defaults();
  for (const char* key : {"positions", "type_vocab_size", "layer_norm_eps", "pooler", "tokenizer", "classifier",
                          "freeze_layers", "pretrained_lr"}) {
    old.erase(key);
  }
  const Settings o = parse_settings(old);
  EXPECT_EQ(o.arch.positions, 0);
  EXPECT_EQ(o.arch.type_vocab_size, 0);
  EXPECT_EQ(o.arch.layer_norm_eps, 1e-12);
  EXPECT_TRUE(o.arch.pooler);
  EXPECT_TRUE(o.classifier);
  EXPECT_EQ(o.tokenizer, "char");
  EXPECT_EQ(o.freeze_layers, 0);
  // The parameter names and order an old weights.bin was written with.
  ClassifierModel model(small_arch(), 3, std::make_shared<MaskRng>(1));
  std::vector<std::string> names;
  for (const auto& [name, t] : named_state(*model)) names.push_back(name);
  EXPECT_EQ(names.front(), "encoder.token_embedding.weight");
  EXPECT_EQ(names[1], "encoder.position_embedding.weight");
  EXPECT_EQ(names[2], "encoder.norm.weight");
  EXPECT_EQ(names.back(), "classifier.bias");
}

TEST(BertHfOptions, EncoderWithoutHeadHasNoClassifier) {
  Architecture a = small_arch();
  a.type_vocab_size = 2;
  a.positions = 128;
  ClassifierModel model(a, 0, std::make_shared<MaskRng>(1));
  EXPECT_FALSE(model->has_classifier());
  EXPECT_TRUE(model->has_pooler());
  const torch::Tensor ids = torch::tensor({{2, 7, 9, 3}}, torch::kInt64);
  const torch::Tensor valid = torch::ones({1, 4}, torch::kBool);
  EXPECT_THROW(model->forward(ids, valid), UsageError);
  a.pooler = false;
  EXPECT_THROW(ClassifierModel(a, 3, std::make_shared<MaskRng>(1)), ConfigError);
}

TEST(BertHfOptions, FreezeStopsEmbeddingsAndFirstLayers) {
  ClassifierModel model(small_arch(), 3, std::make_shared<MaskRng>(1));
  model->encoder->freeze(1);
  for (const auto& p : model->named_parameters()) {
    const std::string& n = p.key();
    const bool want_frozen = n.rfind("encoder.", 0) == 0 && n.rfind("encoder.layers.1.", 0) != 0;
    EXPECT_EQ(p.value().requires_grad(), !want_frozen) << n;
  }
}

TEST(BertHfTokenizer, WordpieceVocabularyRoundTripsThroughABundle) {
  const std::string vocab = testing::hf_fixture("vocab.txt");
  const TitleTokenizer tok(hf::BertTokenizer::load(vocab));
  const std::string dir = testing::scratch_dir() + "/wordpiece_bundle";
  std::filesystem::remove_all(dir);
  {
    BundleWriter writer(dir);
    tok.save(writer, tok.size() + 3);  // a table with rows past vocab.txt
    Manifest m;
    m.family = "bert";
    m.labels = {"a", "b"};
    writer.commit(m);
  }
  const TitleTokenizer back = TitleTokenizer::load(Bundle::open(dir), "wordpiece");
  EXPECT_EQ(back.size(), tok.size() + 3);
  const std::string title = "ＮＢＡ总决赛：Café 2024年";
  EXPECT_EQ(back.encode(title, 64), tok.encode(title, 64));
  EXPECT_EQ(back.tokens_of(back.encode(title, 64)), tok.tokens_of(tok.encode(title, 64)));
}

// The imported F32 classifier against transformers' logits, in padded batches.
TEST(BertHfImport, TinyClassifierLogitsMatchTransformers) {
  const std::string hf = testing::hf_fixture("");
  const std::string dir = testing::scratch_dir() + "/hf_tiny_cls";
  std::filesystem::remove_all(dir);
  testing::copy_tiny_hf_classifier(dir);
  const hf::BertCheckpoint ck = hf::load_bert_checkpoint(dir);
  ClassifierModel model(architecture_of(ck, 64), 10, std::make_shared<MaskRng>(1));
  copy_checkpoint_weights(ck, *model, false);
  model->eval();
  std::ifstream golden(hf + "golden.jsonl");
  std::vector<std::vector<std::int64_t>> encoded;
  std::vector<std::vector<float>> logits;
  for (std::string line; std::getline(golden, line);) {
    const auto j = nlohmann::json::parse(line);
    encoded.push_back(ck.tokenizer.encode(j["text"].get<std::string>(), 64));
    EXPECT_EQ(encoded.back(), j["ids"].get<std::vector<std::int64_t>>());
    logits.push_back(j["logits"].get<std::vector<float>>());
  }
  ASSERT_EQ(encoded.size(), 200u);
  std::vector<std::size_t> rows(encoded.size());
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
  torch::NoGradGuard no_grad;
  const Batch batch = make_batch(encoded, rows, nullptr);
  const torch::Tensor got = model(batch.ids, batch.key_valid);
  double worst = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (std::size_t k = 0; k < 10; ++k) {
      worst = std::max(worst, std::abs(got[i][k].item<double>() - logits[i][k]));
    }
  }
  EXPECT_LT(worst, 1e-4);
}

}  // namespace
}  // namespace newscls::bert
