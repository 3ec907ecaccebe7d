#include "bert/model/encoder_bundle.h"

#include <algorithm>
#include <memory>

#include "bert/model/tensor_io.h"
#include "bert/tokens/title_tokenizer.h"
#include "newscls/core/error.h"

namespace newscls::bert {
namespace {

constexpr const char* kEncoderPayload = "encoder.bin";

}  // namespace

EncoderBundle open_encoder_bundle(const std::string& dir) {
  Bundle bundle = Bundle::open(dir);
  if (bundle.manifest().family != kEncoderFamily) {
    throw ModelFormatError(dir, "is a '" + bundle.manifest().family + "' bundle, not a " +
                                    kEncoderFamily + " (made by newscls pretrain)");
  }
  Settings options = parse_settings(bundle.manifest().config);
  return {TitleTokenizer::load(bundle, options.tokenizer), std::move(options), bundle.payload_path(kEncoderPayload)};
}

void save_encoder_payloads(BundleWriter& writer, const TitleTokenizer& vocab, const EncoderImpl& encoder) {
  vocab.save(writer, encoder.arch().vocab_size);
  save_tensors(writer.payload_path(kEncoderPayload), named_state(encoder));
}

void verify_encoder_bundle(const std::string& dir) {
  EncoderBundle enc = open_encoder_bundle(dir);
  Architecture arch = enc.options.arch;
  arch.vocab_size = std::max(arch.vocab_size, enc.vocab.size());  // as build_model sizes it
  ClassifierModel model(arch, /*num_classes=*/0, std::make_shared<MaskRng>(1));
  load_tensors(enc.weights_path, named_state(*model->encoder));
}

}  // namespace newscls::bert
