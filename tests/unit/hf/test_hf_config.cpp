// config.json of a Hugging Face BERT: the reference configs read as written, and keys of the
// wrong type or impossible values are refused naming the file and the key.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hf/bert_config.h"
#include "newscls/core/error.h"
#include "test_hf_support.h"

namespace newscls {
namespace {

TEST(HfConfig, ReadsTheReferenceConfigs) {
  const hf::BertConfig cls = hf::read_bert_config(testing::hf_fixture("bert-tiny-cls/config.json"));
  EXPECT_EQ(cls.hidden_size, 64);
  EXPECT_EQ(cls.num_hidden_layers, 2);
  EXPECT_EQ(cls.num_attention_heads, 4);
  EXPECT_EQ(cls.intermediate_size, 128);
  EXPECT_EQ(cls.max_position_embeddings, 128);
  EXPECT_EQ(cls.type_vocab_size, 2);
  EXPECT_EQ(cls.vocab_size, 21128);
  EXPECT_DOUBLE_EQ(cls.layer_norm_eps, 1e-12);
  EXPECT_EQ(cls.hidden_act, "gelu");
  EXPECT_EQ(cls.architectures, std::vector<std::string>{"BertForSequenceClassification"});
  ASSERT_EQ(cls.labels.size(), 10u);
  EXPECT_EQ(cls.labels.front(), "finance");
  EXPECT_EQ(cls.labels.back(), "entertainment");
  const hf::BertConfig mlm = hf::read_bert_config(testing::hf_fixture("bert-tiny-mlm/config.json"));
  EXPECT_TRUE(mlm.labels.empty());
  EXPECT_EQ(mlm.architectures, std::vector<std::string>{"BertForPreTraining"});
}

TEST(HfConfig, AbsentKeysTakeTransformersDefaults) {
  const std::string path = testing::write_text(testing::scratch_dir() + "/config.json", "{}");
  const hf::BertConfig c = hf::read_bert_config(path);
  EXPECT_EQ(c.hidden_size, 768);
  EXPECT_EQ(c.num_hidden_layers, 12);
  EXPECT_EQ(c.vocab_size, 30522);
}

TEST(HfConfig, NullsThatTransformersTakesForNoneAreAbsent) {
  const std::string path = testing::write_text(testing::scratch_dir() + "/config.json",
                                               R"({"pad_token_id": null, "problem_type": null, "is_decoder": false})");
  EXPECT_EQ(hf::read_bert_config(path).hidden_size, 768);
}

TEST(HfConfig, WrongTypesAndValuesAreRefusedNamingFileAndKey) {
  const std::string path = testing::scratch_dir() + "/config.json";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"hidden_size": "64"})", "'hidden_size'"},
      {R"({"hidden_size": 64.5})", "'hidden_size'"},
      {R"({"num_hidden_layers": true})", "'num_hidden_layers'"},
      {R"({"num_attention_heads": 0})", "'num_attention_heads'"},
      {R"({"hidden_size": 64, "num_attention_heads": 5})", "'num_attention_heads'"},
      {R"({"layer_norm_eps": "1e-12"})", "'layer_norm_eps'"},
      {R"({"hidden_act": 3})", "'hidden_act'"},
      {R"({"architectures": "BertModel"})", "'architectures'"},
      {R"({"id2label": ["a", "b"]})", "'id2label'"},
      {R"({"id2label": {"0": "a", "2": "b"}})", "'id2label'"},
      {R"({"id2label": {"0": "a", "1": 7}})", "'id2label'"},
      {R"({"id2label": {"0": "a", "1": "a"}})", "'id2label'"},
      {R"({"id2label": {"0": "", "1": "b"}})", "'id2label'"},
      {R"({"id2label": {"0": "a\tb", "1": "c"}})", "'id2label'"},
      {R"({"id2label": {"0": "a", "1": "b"}, "label2id": {"a": 1, "b": 0}})", "'label2id'"},
      {R"({"model_type": 7})", "'model_type'"},
      {R"({"vocab_size": 99999999999999999999})", "'vocab_size'"},
      {R"({"position_embedding_type": "relative_key"})", "'position_embedding_type'"},
      {R"({"hidden_act": null})", "'hidden_act'"},
      {R"({"layer_norm_eps": null})", "'layer_norm_eps'"},
      {R"({"architectures": ["BertForTokenClassification"]})", "'architectures'"},
      {R"({"is_decoder": true})", "'is_decoder'"},
      {R"({"problem_type": "multi_label_classification"})", "'problem_type'"},
  };
  for (const auto& [text, key] : cases) {
    testing::write_text(path, text);
    try {
      hf::read_bert_config(path);
      ADD_FAILURE() << "accepted " << text;
    } catch (const ModelFormatError& e) {
      EXPECT_TRUE(testing::one_line_naming(e.what(), path)) << e.what();
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
  testing::write_text(path, "{\"hidden_size\": ");
  EXPECT_THROW(hf::read_bert_config(path), ModelFormatError);
  EXPECT_THROW(hf::read_bert_config(path + ".absent"), IoError);
}

}  // namespace
}  // namespace newscls
