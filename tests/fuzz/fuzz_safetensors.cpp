// Fuzzes the safetensors reader and the BERT tensor lookup: a file holding the input either
// opens, with every tensor's bytes inside the file and its float read giving numel values,
// or is refused with ModelFormatError; the same goes for assembling a tiny BERT from it
// (hidden 4, 2 layers, the shapes of the seed corpus's honest files).
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "hf/bert_weights.h"
#include "hf/safetensors.h"
#include "newscls/core/error.h"

namespace {

newscls::hf::BertConfig tiny_config() {
  newscls::hf::BertConfig c;
  c.vocab_size = 10;
  c.hidden_size = 4;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 2;
  c.intermediate_size = 8;
  c.max_position_embeddings = 6;
  c.type_vocab_size = 2;
  c.labels = {"x", "y", "z"};
  return c;
}

void check_tensors(const newscls::hf::SafetensorsFile& file, std::size_t file_size) {
  for (const auto& [name, info] : file.tensors()) {
    NEWSCLS_FUZZ_CHECK(info.begin <= info.end && info.end <= file_size);
    NEWSCLS_FUZZ_CHECK(file.raw_bytes(info).size() == info.end - info.begin);
    try {
      NEWSCLS_FUZZ_CHECK(file.read_floats(info).size() == static_cast<std::size_t>(info.numel()));
    } catch (const newscls::ModelFormatError&) {
      // an integer dtype: indexed but not readable as floats
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = newscls::fuzz::write_input("model.safetensors", data, size);
  try {
    const newscls::hf::SafetensorsFile file = newscls::hf::SafetensorsFile::open(path);
    check_tensors(file, size);
    const newscls::hf::BertWeights w = newscls::hf::load_bert_weights(file, tiny_config());
    NEWSCLS_FUZZ_CHECK(w.layers.size() == 2 && w.word_embeddings.values.size() == 40);
  } catch (const newscls::ModelFormatError&) {
  }
  return 0;
}
