#include "bert/compress/float_bert.h"

#include <algorithm>

#include "bert/bert.h"
#include "bert/model/int8_payload.h"
#include "bert/model/tensor_io.h"
#include "newscls/core/config.h"
#include "newscls/core/error.h"

namespace newscls::bert {

FloatBert load_float_bert(const Bundle& bundle, const std::shared_ptr<MaskRng>& rng) {
  refuse_int8_source(bundle);
  // The compress workflow refuses it first (require_classes); the same words if called otherwise.
  if (const std::string why = family().without_classes(bundle); !why.empty()) throw ModelFormatError(bundle.dir(), why);
  FloatBert b;
  b.manifest = bundle.manifest();
  b.config = strip_docs(b.manifest.config);
  b.options = parse_settings(b.config);
  b.tokenizer = TitleTokenizer::load(bundle, b.options.tokenizer);
  b.tokenizer->set_fold_punctuation(b.options.fold_punctuation);
  b.options.arch.vocab_size = std::max(b.options.arch.vocab_size, b.tokenizer->size());
  b.classes = static_cast<std::int64_t>(b.manifest.labels.size());
  b.model = ClassifierModel(b.options.arch, b.classes, rng);
  load_tensors(bundle.payload_path(kWeightsPayload), named_state(*b.model));
  b.model->eval();
  return b;
}

}  // namespace newscls::bert
