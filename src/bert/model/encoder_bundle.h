// The encoder bundle: a model bundle of family "bert-encoder" with its vocabulary's payloads
// (vocab.bin, a CharVocab; or, continued from an imported checkpoint, the WordPiece ones, as
// its config's "tokenizer" says) and encoder.bin (named tensors), written by `newscls pretrain`
// and `adapt` (train/pretrain.cpp) and read by `train --init DIR` and by `info`'s verification.
//
//   EncoderBundle enc = open_encoder_bundle(dir);
//   load_tensors(enc.weights_path, named_state(*model->encoder));   // in the training library
#pragma once

#include <string>

#include "bert/model/settings.h"
#include "bert/tokens/title_tokenizer.h"
#include "newscls/core/bundle.h"

namespace newscls::bert {

constexpr const char* kEncoderFamily = "bert-encoder";
// The encoder's tensors, in model/tensor_io.h's format.
constexpr const char* kEncoderPayload = "encoder.bin";

struct EncoderBundle {
  TitleTokenizer vocab;
  Settings options;
  std::string weights_path;
};

// Throws ModelFormatError when dir holds a bundle of another family.
EncoderBundle open_encoder_bundle(const std::string& dir);
// Loads an encoder bundle as `train --init DIR` would (vocabulary, architecture, every tensor
// by name and shape); throws ModelFormatError naming what does not fit.
void verify_encoder_bundle(const std::string& dir);

}  // namespace newscls::bert
