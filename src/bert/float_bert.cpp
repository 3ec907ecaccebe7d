#include "bert/float_bert.h"

#include <algorithm>

#include "bert/bert.h"
#include "bert/quantize.h"
#include "bert/tensor_io.h"
#include "newscls/config.h"
#include "newscls/error.h"

namespace newscls::bert {
namespace {

constexpr const char* kWeightsPayload = "weights.bin";

}  // namespace

FloatBert load_float_bert(const Bundle& bundle, const std::shared_ptr<MaskRng>& rng) {
  if (bundle.manifest().family != family().name()) {
    throw ModelFormatError(bundle.dir(), "holds a " + bundle.manifest().family + " model; compress needs a " +
                                             family().name() + " bundle");
  }
  refuse_int8_source(bundle);
  FloatBert b;
  b.manifest = bundle.manifest();
  b.config = strip_docs(b.manifest.config);
  b.options = parse_options(b.config);
  if (!b.options.classifier) {
    throw ModelFormatError(bundle.dir(), "is an encoder without a classifier head; compress a fine-tuned bundle");
  }
  b.tokenizer = TitleTokenizer::load(bundle, b.options.tokenizer);
  b.options.arch.vocab_size = std::max(b.options.arch.vocab_size, b.tokenizer->size());
  b.classes = static_cast<std::int64_t>(b.manifest.labels.size());
  b.model = ClassifierModel(b.options.arch, b.classes, rng);
  load_tensors(bundle.payload_path(kWeightsPayload), named_state(*b.model));
  b.model->eval();
  return b;
}

}  // namespace newscls::bert
