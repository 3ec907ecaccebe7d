#include "bert/train/continued_encoder.h"

#include <spdlog/spdlog.h>

#include "bert/bert.h"
#include "bert/model/tensor_io.h"
#include "newscls/core/bundle.h"
#include "newscls/core/error.h"

namespace newscls::bert {
namespace {

Settings adaptable_options(const Bundle& bundle) {
  const Manifest& m = bundle.manifest();
  if (m.family != "bert") {
    throw ModelFormatError(bundle.dir(),
                           "is a '" + m.family + "' bundle; continued pretraining needs a bert classifier");
  }
  Settings o = parse_settings(m.config);
  if (m.payloads.count(kWeightsPayload) == 0) {
    throw UsageError(bundle.dir() +
                     ": holds no float weights (an int8 bundle of compress?); adapt the float bundle it "
                     "was made from, then compress the result");
  }
  return o;
}

// Copies each tensor by name; the token table's first rows only where the new one is longer.
void copy_grown(const NamedTensors& from, const NamedTensors& into) {
  torch::NoGradGuard guard;
  for (std::size_t i = 0; i < into.size(); ++i) {
    const torch::Tensor& src = from.at(i).second;
    const torch::Tensor& dst = into[i].second;
    if (from[i].first != into[i].first) throw std::logic_error("continue_encoder: tensors out of order");
    if (src.sizes() == dst.sizes()) {
      dst.copy_(src);
    } else {
      dst.narrow(0, 0, src.size(0)).copy_(src);  // the grown token table: new rows keep their init
    }
  }
}

}  // namespace

ContinuedEncoder continue_encoder(const std::string& bundle_dir, const std::vector<std::string>& corpus,
                                  const std::shared_ptr<MaskRng>& rng) {
  const Bundle bundle = Bundle::open(bundle_dir);
  Settings o = adaptable_options(bundle);
  const TitleTokenizer trained_vocab = TitleTokenizer::load(bundle, o.tokenizer);
  o.arch.vocab_size = std::max(o.arch.vocab_size, trained_vocab.size());
  const auto classes = static_cast<std::int64_t>(o.classifier ? bundle.manifest().labels.size() : 0);
  ClassifierModel trained(o.arch, classes, rng);
  load_tensors(bundle.payload_path(kWeightsPayload), named_state(*trained));

  ContinuedEncoder out{trained_vocab.grown(corpus, o.vocab_min_count, o.vocab_max_size), o, nullptr, 0};
  out.added_tokens = out.vocab.size() - trained_vocab.size();
  out.options.arch.vocab_size = std::max(o.arch.vocab_size, out.vocab.size());
  out.encoder = Encoder(out.options.arch, rng);
  init_bert_weights(*out.encoder);
  copy_grown(named_state(*trained->encoder), named_state(*out.encoder));
  spdlog::info("continued pretraining from {}: {} vocabulary {} + {} characters of the new text", bundle_dir,
               o.tokenizer, trained_vocab.size(), out.added_tokens);
  return out;
}

}  // namespace newscls::bert
