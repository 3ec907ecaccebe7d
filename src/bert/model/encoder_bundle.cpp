#include "bert/model/encoder_bundle.h"

#include <algorithm>

#include "bert/model/state_payload.h"
#include "bert/tokens/title_tokenizer.h"
#include "newscls/core/error.h"

namespace newscls::bert {

EncoderBundle open_encoder_bundle(const std::string& dir) {
  Bundle bundle = Bundle::open(dir);
  if (bundle.manifest().family != kEncoderFamily) {
    throw ModelFormatError(
        dir, "is a '" + bundle.manifest().family + "' bundle, not a " + kEncoderFamily + " (made by newscls pretrain)");
  }
  Settings options = parse_settings(bundle.manifest().config);
  return {TitleTokenizer::load(bundle, options.tokenizer), std::move(options), bundle.payload_path(kEncoderPayload)};
}

void verify_encoder_bundle(const std::string& dir) {
  EncoderBundle enc = open_encoder_bundle(dir);
  Architecture arch = enc.options.arch;
  arch.vocab_size = std::max(arch.vocab_size, enc.vocab.size());  // as the training library sizes it
  // The encoder's own tensors: a headless classifier's, without their "encoder." prefix.
  const std::string prefix = "encoder.";
  std::vector<TensorSpec> specs;
  for (TensorSpec& spec : expected_state(arch, /*num_classes=*/0)) {
    if (spec.name.rfind(prefix, 0) != 0) continue;
    spec.name.erase(0, prefix.size());
    specs.push_back(std::move(spec));
  }
  read_float_state(enc.weights_path, specs);
}

}  // namespace newscls::bert
