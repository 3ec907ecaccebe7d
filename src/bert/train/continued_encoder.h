// The encoder of a trained bert bundle, made ready to continue its pretraining on a reader's
// feed (domain-adaptive pretraining, Gururangan et al. 2020): its vocabulary (characters, or an
// imported WordPiece one) grown by the new text's frequent characters it lacked, the token
// table's new rows initialised as BERT initialises, every other weight as trained. The bigram
// table is hashed: every bigram of the feed already has a row, which the continued pretraining
// trains.
//
//   ContinuedEncoder c = continue_encoder("runs/bert", titles_and_feed, rng);
//   pretrain_mlm(c.encoder, rng, c.options, {&encoded, c.vocab.size(), seed, &comm, c.vocab.mask_ids()});
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bert/model/encoder.h"
#include "bert/model/settings.h"
#include "bert/tokens/title_tokenizer.h"

namespace newscls::bert {

struct ContinuedEncoder {
  TitleTokenizer vocab;
  Settings options;  // the bundle's, with the grown vocabulary's size
  Encoder encoder{nullptr};
  std::int64_t added_tokens = 0;
};

// bundle_dir: a float bert bundle (an int8 one is refused, naming what to adapt instead).
ContinuedEncoder continue_encoder(const std::string& bundle_dir, const std::vector<std::string>& corpus,
                                  const std::shared_ptr<MaskRng>& rng);

}  // namespace newscls::bert
