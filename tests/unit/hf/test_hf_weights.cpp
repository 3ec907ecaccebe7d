// Finding every BERT tensor under the names Hugging Face files carry, with shapes checked
// against config.json: the two reference checkpoints, hand-made variants of the naming, and
// missing, mis-shaped or ambiguous tensors refused naming the file and the tensor.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "hf/bert_weights.h"
#include "hf/checkpoint.h"
#include "newscls/core/error.h"
#include "test_hf_support.h"

namespace newscls {
namespace {

using testing::StTensor;

// hidden 4, 2 heads, 2 layers, FF 8, 10 words, 6 positions, 3 labels, read as config.json.
hf::BertConfig tiny_config() {
  const std::string path =
      testing::write_text(std::filesystem::temp_directory_path().string() + "/newscls-unit-hf-config-" +
                              std::to_string(::getpid()) + ".json",
                          R"({"vocab_size": 10, "hidden_size": 4, "num_hidden_layers": 2, "num_attention_heads": 2,)"
                          R"( "intermediate_size": 8, "max_position_embeddings": 6, "type_vocab_size": 2,)"
                          R"( "id2label": {"0": "x", "1": "y", "2": "z"}})");
  hf::BertConfig config = hf::read_bert_config(path);
  std::filesystem::remove(path);
  return config;
}

// Every tensor of a BertForSequenceClassification of tiny_config(), named as `prefix` and
// `old_norms` (gamma/beta) say.
std::vector<StTensor> tiny_tensors(const std::string& prefix, bool old_norms) {
  const std::string w = old_norms ? "gamma" : "weight", b = old_norms ? "beta" : "bias";
  std::vector<StTensor> t;
  const auto add = [&](const std::string& name, std::vector<std::int64_t> shape) {
    t.push_back(testing::f32_tensor(name, shape));
  };
  const auto linear = [&](const std::string& name, std::int64_t out, std::int64_t in) {
    add(name + ".weight", {out, in});
    add(name + ".bias", {out});
  };
  const auto norm = [&](const std::string& name) {
    add(name + ".LayerNorm." + w, {4});
    add(name + ".LayerNorm." + b, {4});
  };
  add(prefix + "embeddings.word_embeddings.weight", {10, 4});
  add(prefix + "embeddings.position_embeddings.weight", {6, 4});
  add(prefix + "embeddings.token_type_embeddings.weight", {2, 4});
  norm(prefix + "embeddings");
  for (int i = 0; i < 2; ++i) {
    const std::string l = prefix + "encoder.layer." + std::to_string(i) + ".";
    for (const char* name :
         {"attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"}) {
      linear(l + name, 4, 4);
    }
    norm(l + "attention.output");
    linear(l + "intermediate.dense", 8, 4);
    linear(l + "output.dense", 4, 8);
    norm(l + "output");
  }
  linear(prefix + "pooler.dense", 4, 4);
  linear("classifier", 3, 4);
  return t;
}

hf::SafetensorsFile write_file(const std::vector<StTensor>& tensors) {
  const std::string path = testing::scratch_dir() + "/model.safetensors";
  testing::write_text(path, testing::safetensors_image(tensors));
  return hf::SafetensorsFile::open(path);
}

void expect_refused(const std::vector<StTensor>& tensors, const std::string& expected) {
  const hf::SafetensorsFile file = write_file(tensors);
  try {
    hf::load_bert_weights(file, tiny_config());
    ADD_FAILURE() << "accepted; expected: " << expected;
  } catch (const ModelFormatError& e) {
    EXPECT_TRUE(testing::one_line_naming(e.what(), file.path())) << e.what();
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
}

std::vector<StTensor> without(std::vector<StTensor> t, const std::string& name) {
  t.erase(std::remove_if(t.begin(), t.end(), [&](const StTensor& x) { return x.name == name; }), t.end());
  return t;
}

TEST(HfWeights, EveryNamingVariantGivesTheSameWeights) {
  for (const std::string prefix : {"bert.", ""}) {
    for (bool old_norms : {false, true}) {
      const hf::SafetensorsFile file = write_file(tiny_tensors(prefix, old_norms));
      const hf::BertWeights w = hf::load_bert_weights(file, tiny_config());
      ASSERT_EQ(w.layers.size(), 2u);
      EXPECT_EQ(w.word_embeddings.shape, (std::vector<std::int64_t>{10, 4}));
      EXPECT_EQ(w.word_embeddings.values[7], 7.0f);
      EXPECT_EQ(w.layers[1].intermediate.weight.shape, (std::vector<std::int64_t>{8, 4}));
      EXPECT_EQ(w.layers[1].output.weight.shape, (std::vector<std::int64_t>{4, 8}));
      EXPECT_EQ(w.layers[0].output_norm.weight.name,
                prefix + "encoder.layer.0.output.LayerNorm." + (old_norms ? "gamma" : "weight"));
      ASSERT_TRUE(w.pooler && w.classifier);
      EXPECT_EQ(w.classifier->weight.shape, (std::vector<std::int64_t>{3, 4}));
      EXPECT_TRUE(w.unused.empty());
    }
  }
}

TEST(HfWeights, HeadsMayBeAbsentAndExtrasAreListedUnused) {
  std::vector<StTensor> t = without(without(tiny_tensors("bert.", false), "classifier.weight"), "classifier.bias");
  t = without(without(t, "bert.pooler.dense.weight"), "bert.pooler.dense.bias");
  t.push_back(testing::f32_tensor("cls.predictions.bias", {10}));
  t.push_back({"bert.embeddings.position_ids", "I64", {1, 6}, std::string(48, '\0')});
  const hf::BertWeights w = hf::load_bert_weights(write_file(t), tiny_config());
  EXPECT_FALSE(w.pooler);
  EXPECT_FALSE(w.classifier);
  EXPECT_EQ(w.unused, (std::vector<std::string>{"bert.embeddings.position_ids", "cls.predictions.bias"}));
}

TEST(HfWeights, MissingMisShapedAndAmbiguousTensorsAreNamed) {
  const std::vector<StTensor> good = tiny_tensors("bert.", false);
  expect_refused(without(good, "bert.encoder.layer.1.attention.self.key.bias"),
                 "missing tensor 'encoder.layer.1.attention.self.key.bias'");
  std::vector<StTensor> reshaped = without(good, "bert.encoder.layer.0.intermediate.dense.weight");
  reshaped.push_back(testing::f32_tensor("bert.encoder.layer.0.intermediate.dense.weight", {4, 8}));
  expect_refused(reshaped, "'bert.encoder.layer.0.intermediate.dense.weight' has shape [4, 8], expected [8, 4]");
  std::vector<StTensor> head = without(good, "classifier.weight");
  head.push_back(testing::f32_tensor("classifier.weight", {5, 4}));
  head = without(head, "classifier.bias");
  head.push_back(testing::f32_tensor("classifier.bias", {5}));
  expect_refused(head, "3 labels in id2label");
  expect_refused(without(good, "classifier.bias"), "'classifier.weight' without 'classifier.bias'");
  std::vector<StTensor> both = good;
  both.push_back(testing::f32_tensor("embeddings.word_embeddings.weight", {10, 4}));
  expect_refused(both, "holds both");
  std::vector<StTensor> mixed = good;
  mixed.push_back(testing::f32_tensor("bert.embeddings.LayerNorm.gamma", {4}));
  expect_refused(mixed, "holds both");
}

TEST(HfWeights, ReferenceCheckpointsLoadWithEveryTensorShaped) {
  const std::string hf = testing::hf_fixture("");
  // The checkpoint folders lack vocab.txt; assemble each with the fixture vocabulary.
  for (const std::string model : {"bert-tiny-cls", "bert-tiny-mlm"}) {
    const std::string dir = testing::scratch_dir() + "/" + model;
    std::filesystem::create_directories(dir);
    std::filesystem::copy_file(testing::hf_fixture("vocab.txt"), dir + "/vocab.txt");
    std::filesystem::copy_file(hf + model + "/config.json", dir + "/config.json");
    std::filesystem::create_symlink(hf + model + "/model.safetensors", dir + "/model.safetensors");
    const hf::BertCheckpoint ck = hf::load_bert_checkpoint(dir);
    const hf::BertWeights& w = ck.weights;
    ASSERT_EQ(w.layers.size(), 2u);
    EXPECT_EQ(w.word_embeddings.shape, (std::vector<std::int64_t>{21128, 64}));
    EXPECT_EQ(w.position_embeddings.shape, (std::vector<std::int64_t>{128, 64}));
    EXPECT_EQ(w.layers[1].intermediate.weight.shape, (std::vector<std::int64_t>{128, 64}));
    EXPECT_TRUE(w.pooler.has_value());
    for (float v : w.layers[1].output_norm.weight.values) ASSERT_TRUE(std::isfinite(v));
    if (model == "bert-tiny-cls") {
      ASSERT_TRUE(w.classifier.has_value());
      EXPECT_EQ(w.classifier->weight.shape, (std::vector<std::int64_t>{10, 64}));
      EXPECT_EQ(w.embedding_norm.weight.name, "bert.embeddings.LayerNorm.weight");
      EXPECT_TRUE(w.unused.empty());
    } else {
      EXPECT_FALSE(w.classifier.has_value());
      EXPECT_EQ(w.embedding_norm.weight.name, "bert.embeddings.LayerNorm.gamma");
      EXPECT_EQ(w.unused.size(), 7u);  // the cls.predictions.* and cls.seq_relationship.* heads
      for (const std::string& name : w.unused) EXPECT_EQ(name.rfind("cls.", 0), 0u) << name;
    }
  }
}

TEST(HfWeights, CheckpointFolderWithoutSafetensorsNamesTheFile) {
  const std::string dir = testing::scratch_dir();
  testing::write_text(dir + "/pytorch_model.bin", "x");
  try {
    hf::load_bert_checkpoint(dir);
    FAIL();
  } catch (const IoError& e) {
    EXPECT_TRUE(testing::one_line_naming(e.what(), dir + "/model.safetensors")) << e.what();
    EXPECT_NE(std::string(e.what()).find("pytorch_model.bin"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace newscls
