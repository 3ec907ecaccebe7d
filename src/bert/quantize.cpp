#include "bert/quantize.h"

#include <algorithm>
#include <map>

#include "bert/attention.h"
#include "bert/encoder.h"
#include "bert/float_bert.h"
#include "bert/quantized_linear.h"
#include "bert/settings.h"
#include "bert/tensor_io.h"
#include "bert/title_tokenizer.h"
#include "bert/training.h"
#include "newscls/core/binary_io.h"
#include "newscls/core/config.h"
#include "newscls/core/error.h"

namespace newscls::bert {
namespace {

constexpr char kMagic[4] = {'N', 'C', 'Q', '8'};
constexpr std::uint32_t kVersion = 1;
constexpr std::uint32_t kMaxDims = 8;
constexpr std::uint8_t kF32 = 0, kInt8 = 1;
// Dev titles on which the facts compare int8 with F32 probabilities.
constexpr std::size_t kCheckTitles = 512;

void write_tensor(PayloadWriter& w, const std::string& name, const torch::Tensor& tensor, bool int8) {
  const torch::Tensor t = tensor.detach().to(torch::kFloat32).contiguous();
  w.str(name);
  w.u8(int8 ? kInt8 : kF32);
  w.u32(static_cast<std::uint32_t>(t.dim()));
  for (std::int64_t d : t.sizes()) w.u64(static_cast<std::uint64_t>(d));
  if (!int8) {
    w.f32_array(t.data_ptr<float>(), static_cast<std::size_t>(t.numel()));
    return;
  }
  const Int8Rows q = quantize_rows(t);
  w.f32_array(q.scales.data_ptr<float>(), static_cast<std::size_t>(q.scales.numel()));
  w.str(std::string(reinterpret_cast<const char*>(q.values.data_ptr<std::int8_t>()),
                    static_cast<std::size_t>(q.values.numel())));
}

// One tensor into `target`; returns its int8 rows when stored so (else undefined values).
Int8Rows read_tensor(PayloadReader& r, const std::string& name, torch::Tensor& target) {
  const std::string& path = r.path();
  const std::string found = r.str();
  if (found != name) throw ModelFormatError(path, "tensor '" + found + "' where '" + name + "' was expected");
  const std::uint8_t kind = r.u8();
  if (kind != kF32 && kind != kInt8) throw ModelFormatError(path, "tensor '" + name + "' has unknown kind " + std::to_string(kind));
  const std::uint32_t ndim = r.u32();
  if (ndim > kMaxDims) throw ModelFormatError(path, "tensor '" + name + "' has too many dimensions");
  std::vector<std::int64_t> shape;
  for (std::uint32_t i = 0; i < ndim; ++i) shape.push_back(static_cast<std::int64_t>(r.u64()));
  if (torch::IntArrayRef(shape) != target.sizes()) {
    throw ModelFormatError(path, "tensor '" + name + "' has shape " + c10::str(torch::IntArrayRef(shape)) +
                                     ", expected " + c10::str(target.sizes()));
  }
  if (kind == kF32) {
    std::vector<float> values = r.f32_array();
    if (static_cast<std::int64_t>(values.size()) != target.numel()) {
      throw ModelFormatError(path, "tensor '" + name + "' has the wrong number of values");
    }
    target.copy_(torch::from_blob(values.data(), target.sizes(), torch::kFloat32));
    return {};
  }
  std::vector<float> scales = r.f32_array();
  const std::string bytes = r.str();
  if (ndim < 1 || static_cast<std::int64_t>(scales.size()) != shape[0] ||
      static_cast<std::int64_t>(bytes.size()) != target.numel()) {
    throw ModelFormatError(path, "int8 tensor '" + name + "' has the wrong number of scales or values");
  }
  if (std::any_of(scales.begin(), scales.end(), [](float s) { return !(s > 0.0f) || !std::isfinite(s); })) {
    throw ModelFormatError(path, "int8 tensor '" + name + "' has a scale that is not a positive number");
  }
  Int8Rows q;
  q.values = torch::from_blob(const_cast<char*>(bytes.data()), target.sizes(), torch::kInt8).clone();
  q.scales = torch::from_blob(scales.data(), {shape[0]}, torch::kFloat32).clone();
  target.copy_(dequantize_rows(q));
  return q;
}

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

bool has_int8_weights(const Bundle& bundle) { return bundle.manifest().payloads.count(kInt8Payload) > 0; }

void refuse_int8_source(const Bundle& bundle) {
  if (has_int8_weights(bundle)) {
    throw UsageError(bundle.dir() + " holds int8 weights: compress the float bundle it was quantised from");
  }
}

void save_int8_weights(const std::string& path, const torch::nn::Module& model, const Int8Layout& layout) {
  const NamedTensors state = named_state(model);
  PayloadWriter w(path, kMagic, kVersion);
  w.str(layout.engine);
  w.u64(state.size());
  for (const auto& [name, tensor] : state) write_tensor(w, name, tensor, layout.int8_names.count(name) > 0);
  w.finish();
}

Int8Layout load_int8_weights(const std::string& path, torch::nn::Module& model) {
  PayloadReader r(path, kMagic, kVersion);
  if (r.version() != kVersion) {
    throw ModelFormatError(path, "int8 payload version " + std::to_string(r.version()) + " is not " +
                                     std::to_string(kVersion));
  }
  Int8Layout layout;
  layout.engine = r.str();
  const NamedTensors state = named_state(model);
  const std::uint64_t n = r.u64();
  if (n != state.size()) {
    throw ModelFormatError(path, "holds " + std::to_string(n) + " tensors, expected " + std::to_string(state.size()));
  }
  std::map<std::string, Int8Rows> int8;
  torch::NoGradGuard no_grad;
  for (auto [name, target] : state) {
    Int8Rows q = read_tensor(r, name, target);
    if (q.values.defined()) int8.emplace(name, std::move(q));
  }
  r.expect_end();
  for (const auto& [name, q] : int8) layout.int8_names.insert(name);
  try {
    select_int8_engine(layout.engine);
  } catch (const Error& e) {
    throw ModelFormatError(path, std::string("needs the quantized engine it was made for: ") + e.what());
  }
  attach_int8_linears(model, int8);
  for (const auto& m : model.modules()) {
    if (auto* attention = m->as<MultiHeadAttentionImpl>()) attention->stack_int8_projections();
  }
  return layout;
}

nlohmann::json quantize_defaults() {
  nlohmann::json c;
  c["engine"] = "onednn";
  c["embeddings"] = true;
  c["_doc"] = {
      {"engine", "int8 GEMMs: onednn (oneDNN's matmul called directly, inputs per row) or qnnpack (LibTorch's quantized op)"},
      {"embeddings", "also store the embedding tables as int8 rows (dequantised when loaded); they are most of the bundle"},
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
nlohmann::json agreement(ClassifierModel f32, ClassifierModel int8, const TitleTokenizer& vocab,
                         const Dataset* dev, const Options& options) {
  if (dev == nullptr || dev->size() == 0) return nlohmann::json::object();
  const Encoded titles = encode_titles(vocab, dev->titles, options.arch.max_len, kCheckTitles);
  const torch::Tensor a = predict_probs(f32, titles, options.predict_batch_size);
  const torch::Tensor b = predict_probs(int8, titles, options.predict_batch_size);
  return {{"check_titles", titles.size()},
          {"prob_max_abs_diff", (a - b).abs().max().item<double>()},
          {"label_agreement", a.argmax(1).eq(b.argmax(1)).to(torch::kFloat64).mean().item<double>()}};
}

}  // namespace

nlohmann::json quantize_bundle(const CompressRequest& request) {
  const nlohmann::json settings = quantize_settings(request.overrides);
  select_int8_engine(settings.at("engine").get<std::string>());
  auto rng = std::make_shared<MaskRng>(request.seed);
  const FloatBert source = load_float_bert(Bundle::open(request.model_dir), rng);
  const Options& options = source.options;
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
  nlohmann::json quantized = {{"payload", kInt8Payload}, {"payload_version", kVersion},
                              {"engine", layout.engine}, {"embeddings", settings.at("embeddings")},
                              {"int8_tensors", layout.int8_names.size()}, {"int8_values", int8_values},
                              {"source", request.model_dir}};
  nlohmann::json facts = {{"settings", settings}, {"parameters_before", parameter_count(*f32)},
                          {"parameters_after", parameter_count(*int8)}, {"quantized", quantized}};
  facts["agreement"] = agreement(f32, int8, vocab, request.dev, options);
  Manifest manifest = source.manifest;
  manifest.payloads.clear();
  manifest.training["quantized"] = quantized;
  writer.commit(manifest);
  return facts;
}

}  // namespace newscls::bert
