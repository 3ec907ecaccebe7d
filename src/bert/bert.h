// Factory entry points of the bert family (see include/newscls/core/classifier.h), and MLM
// pretraining of an encoder bundle for `newscls pretrain`.
//
// An encoder bundle is a model bundle of family "bert-encoder" with payloads vocab.bin
// (CharVocab) and encoder.bin (named tensors); `train --init DIR` fine-tunes from it.
//
//   PretrainRequest req{config, &train, &labels, seed, threads, "runs/bert-encoder"};  // newscls/core/family.h
//   nlohmann::json facts = pretrain_encoder_bundle(req);
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "newscls/core/classifier.h"
#include "newscls/core/family.h"

namespace newscls::bert {

const Family& family();
std::unique_ptr<Classifier> make_classifier();
// Documented defaults; configs/bert.json mirrors them (a unit test checks).
nlohmann::json default_config();

constexpr const char* kEncoderFamily = "bert-encoder";
// A fine-tuned float bundle's weights payload (an int8 one holds weights.int8.bin instead).
constexpr const char* kWeightsPayload = "weights.bin";

// Builds the vocabulary, pretrains for pretrain_epochs (capped by pretrain_max_steps) and
// commits the encoder bundle to out_dir. Returns the training facts.
nlohmann::json pretrain_encoder_bundle(const PretrainRequest& request);

// Loads an encoder bundle as `train --init DIR` would (vocabulary, architecture, every tensor
// by name and shape); throws ModelFormatError naming what does not fit.
void verify_encoder_bundle(const std::string& dir);

// The format import_checkpoint reads: a Hugging Face BERT folder (config.json, vocab.txt,
// model.safetensors, tokenizer_config.json when present).
constexpr const char* kHuggingFaceFormat = "huggingface-bert";

// `newscls import-hf`: a "bert" bundle with a WordPiece vocabulary. With a classifier head
// (id2label) it classifies; without one (config "classifier": false, placeholder labels) it
// embeds and dumps attention, and predict/eval refuse it naming `train --init hf:DIR`.
nlohmann::json import_hf_bundle(const ImportRequest& request);

}  // namespace newscls::bert
