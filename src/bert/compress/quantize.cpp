#include "bert/compress/quantize.h"

#include <algorithm>
#include <map>

#include "bert/compress/float_bert.h"
#include "bert/kernels/quantized_linear.h"
#include "bert/model/encoder.h"
#include "bert/model/settings.h"
#include "bert/model/tensor_io.h"
#include "bert/tokens/title_tokenizer.h"
#include "bert/train/training.h"
#include "newscls/core/config.h"
#include "newscls/core/error.h"

namespace newscls::bert {
namespace {

// Dev titles on which the facts compare int8 with F32 probabilities.
constexpr std::size_t kCheckTitles = 512;

std::set<std::string> weights_of(const torch::nn::Module& model, bool embeddings) {
  std::set<std::string> names;
  for (const auto& item : model.named_modules()) {
    const bool linear = item.value()->as<torch::nn::LinearImpl>() != nullptr;
    const bool table = embeddings && item.value()->as<torch::nn::EmbeddingImpl>() != nullptr;
    if (linear || table) names.insert((item.key().empty() ? "" : item.key() + ".") + "weight");
  }
  return names;
}

}  // namespace

nlohmann::json quantize_defaults() {
  nlohmann::json c;
  c["engine"] = "onednn";
  c["embeddings"] = true;
  c["_doc"] = {
      {"engine",
       "int8 GEMMs: onednn (oneDNN's matmul called directly, inputs per row) or qnnpack (LibTorch's quantized op)"},
      {"embeddings",
       "also store the embedding tables as int8 rows (dequantised when loaded); they are most of the bundle"},
  };
  return c;
}

Int8Layout int8_layout_for(const torch::nn::Module& model, const nlohmann::json& settings) {
  return {settings.at("engine").get<std::string>(), weights_of(model, settings.at("embeddings").get<bool>())};
}

namespace {

nlohmann::json quantize_settings(const std::vector<std::string>& overrides) {
  nlohmann::json s = quantize_defaults();
  for (const std::string& o : overrides) apply_override(s, o);
  check_config_keys(s, quantize_defaults(), "compress --method quantize");
  s = strip_docs(s);
  config_string(s, "engine");
  config_bool(s, "embeddings");
  return s;
}

// How far the int8 model's probabilities are from the F32 model's on the first dev titles.
nlohmann::json agreement(ClassifierModel f32, ClassifierModel int8, const TitleTokenizer& vocab, const Dataset* dev,
                         const Settings& options) {
  if (dev == nullptr || dev->size() == 0) return nlohmann::json::object();
  const Encoded titles = encode_titles(vocab, dev->titles, options.arch.max_len, kCheckTitles);
  const torch::Tensor a = predict_probs(f32, titles, options.predict_batch_size);
  const torch::Tensor b = predict_probs(int8, titles, options.predict_batch_size);
  return {{"check_titles", titles.size()},
          {"prob_max_abs_diff", (a - b).abs().max().item<double>()},
          {"label_agreement", a.argmax(1).eq(b.argmax(1)).to(torch::kFloat64).mean().item<double>()}};
}

}  // namespace

nlohmann::json quantize_bundle(const CompressContext& request) {
  const nlohmann::json settings = quantize_settings(request.overrides);
  select_int8_engine(settings.at("engine").get<std::string>());
  auto rng = std::make_shared<MaskRng>(request.seed);
  const FloatBert source = load_float_bert(Bundle::open(request.model_dir), rng);
  const Settings& options = source.options;
  at::set_num_threads(std::max(1, std::min(request.threads, options.max_threads)));
  const TitleTokenizer& vocab = *source.tokenizer;
  const std::int64_t classes = source.classes;
  ClassifierModel f32 = source.model;
  const Int8Layout layout = int8_layout_for(*f32, settings);

  BundleWriter writer(request.out_dir);
  vocab.save(writer, options.arch.vocab_size);
  const std::string payload = writer.payload_path(kInt8Payload);
  save_int8_weights(payload, *f32, layout);
  ClassifierModel int8(options.arch, classes, rng);
  load_int8_weights(payload, *int8);  // what loading the bundle will see

  std::int64_t int8_values = 0;
  for (const auto& [name, t] : named_state(*f32)) int8_values += layout.int8_names.count(name) ? t.numel() : 0;
  nlohmann::json quantized = {{"payload", kInt8Payload},
                              {"payload_version", kInt8PayloadVersion},
                              {"engine", layout.engine},
                              {"embeddings", settings.at("embeddings")},
                              {"int8_tensors", layout.int8_names.size()},
                              {"int8_values", int8_values},
                              {"source", request.model_dir}};
  nlohmann::json facts = {{"settings", settings},
                          {"parameters_before", parameter_count(*f32)},
                          {"parameters_after", parameter_count(*int8)},
                          {"quantized", quantized}};
  facts["agreement"] = agreement(f32, int8, vocab, request.dev, options);
  Manifest manifest = source.manifest;
  manifest.payloads.clear();
  manifest.training["quantized"] = quantized;
  writer.commit(manifest);
  return facts;
}

}  // namespace newscls::bert
