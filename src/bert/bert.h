// Factory entry points of the bert family (see include/newscls/core/classifier.h), and the commands
// that write bundles without training a classifier: MLM pretraining of an encoder bundle for
// `newscls pretrain`, and `newscls import-hf`.
//
// The family lives in two libraries: the runtime (libnewscls_bert_runtime: tokens, kernels,
// model, this family and its classifier's predict/load/save/embed/attention) and the training
// library (libnewscls_bert_train: train/, compress/), which the runtime loads only when asked
// to train, pretrain, import or compress (bert_training.h). pretrain_encoder_bundle and
// import_hf_bundle are defined in the training library.
//
// An encoder bundle (model/encoder_bundle.h) is a model bundle of family "bert-encoder";
// `train --init DIR` fine-tunes from it.
//
//   PretrainContext req{config, &train, &labels, seed, threads, "runs/bert-encoder"};  // newscls/core/family.h
//   nlohmann::json facts = pretrain_encoder_bundle(req);
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "bert/model/encoder_bundle.h"
#include "newscls/core/classifier.h"
#include "newscls/core/family.h"

namespace newscls::bert {

const Family& family();
std::unique_ptr<Classifier> make_classifier();
// Documented defaults; configs/bert.json mirrors them (a unit test checks).
nlohmann::json default_config();

// A fine-tuned float bundle's weights payload (an int8 one holds weights.int8.bin instead).
constexpr const char* kWeightsPayload = "weights.bin";

// Builds the vocabulary, pretrains for pretrain_epochs (capped by pretrain_max_steps) and
// commits the encoder bundle to out_dir. Returns the training facts.
nlohmann::json pretrain_encoder_bundle(const PretrainContext& request);

// The format import_checkpoint reads: a Hugging Face BERT folder (config.json, vocab.txt,
// model.safetensors, tokenizer_config.json when present).
constexpr const char* kHuggingFaceFormat = "huggingface-bert";

// `newscls import-hf`: a "bert" bundle with a WordPiece vocabulary. With a classifier head
// (id2label) it classifies; without one (config "classifier": false, placeholder labels) it
// embeds and dumps attention, and predict/eval refuse it naming `train --init hf:DIR`.
nlohmann::json import_hf_bundle(const ImportContext& request);

}  // namespace newscls::bert
