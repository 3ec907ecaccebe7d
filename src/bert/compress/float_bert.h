// A fine-tuned float bert read from its bundle: what compress's methods (quantize, prune,
// distill) start from. Its options come from the bundle's own config, as loading it for
// predict reads them (a key the bundle predates keeps its neutral value, not today's default),
// and its tokenizer folds punctuation when the bundle does.
//
//   FloatBert b = load_float_bert(Bundle::open(dir), std::make_shared<MaskRng>(seed));
//   torch::Tensor probs = predict_probs(b.model, encode_titles(*b.tokenizer, titles, max_len), 64);
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "bert/model/encoder.h"
#include "bert/model/fast_dropout.h"
#include "bert/model/settings.h"
#include "bert/tokens/title_tokenizer.h"
#include "newscls/core/bundle.h"

namespace newscls::bert {

struct FloatBert {
  Manifest manifest;
  nlohmann::json config;  // the bundle's, without "_doc"
  Settings options;       // parsed from config; arch.vocab_size at least the tokenizer's
  std::optional<TitleTokenizer> tokenizer;
  ClassifierModel model{nullptr};  // in eval mode
  std::int64_t classes = 0;
};

// Refuses, naming the bundle, one holding int8 weights (compress the float bundle it came from)
// and an encoder without a classifier head.
FloatBert load_float_bert(const Bundle& bundle, const std::shared_ptr<MaskRng>& rng);

}  // namespace newscls::bert
