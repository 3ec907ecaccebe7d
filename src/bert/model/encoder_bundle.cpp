#include "bert/model/encoder_bundle.h"

#include <algorithm>
#include <memory>

#include "bert/model/tensor_io.h"
#include "bert/tokens/title_tokenizer.h"
#include "newscls/core/error.h"

namespace newscls::bert {
namespace {

constexpr const char* kVocabPayload = "vocab.bin";
constexpr const char* kEncoderPayload = "encoder.bin";

}  // namespace

EncoderBundle open_encoder_bundle(const std::string& dir) {
  Bundle bundle = Bundle::open(dir);
  if (bundle.manifest().family != kEncoderFamily) {
    throw ModelFormatError(dir, "is a '" + bundle.manifest().family + "' bundle, not a " +
                                    kEncoderFamily + " (made by newscls pretrain)");
  }
  return {CharVocab::load(bundle.payload_path(kVocabPayload)),
          parse_options(bundle.manifest().config), bundle.payload_path(kEncoderPayload)};
}

void save_encoder_payloads(BundleWriter& writer, const CharVocab& vocab, const EncoderImpl& encoder) {
  vocab.save(writer.payload_path(kVocabPayload));
  save_tensors(writer.payload_path(kEncoderPayload), named_state(encoder));
}

void verify_encoder_bundle(const std::string& dir) {
  EncoderBundle enc = open_encoder_bundle(dir);
  const TitleTokenizer vocab(std::move(enc.vocab));
  Architecture arch = enc.options.arch;
  arch.vocab_size = std::max(arch.vocab_size, vocab.size());  // as build_model sizes it
  ClassifierModel model(arch, /*num_classes=*/0, std::make_shared<MaskRng>(1));
  load_tensors(enc.weights_path, named_state(*model->encoder));
}

}  // namespace newscls::bert
