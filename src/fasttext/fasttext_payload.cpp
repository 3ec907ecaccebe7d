// fasttext.bin: writing and reading the payload laid out in engine.h, every field checked.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "fasttext/engine.h"
#include "newscls/core/binary_io.h"
#include "newscls/core/error.h"

namespace newscls::fasttext {
namespace {

constexpr char kMagic[4] = {'N', 'C', 'F', 'T'};
constexpr std::uint32_t kVersion = 1;
constexpr std::uint8_t kStorageF32 = 0;
constexpr std::uint8_t kStorageInt8 = 1;

std::uint32_t read_bounded(PayloadReader& r, const char* what, std::uint32_t min, std::uint32_t max) {
  const std::uint32_t v = r.u32();
  if (v < min || v > max) {
    throw ModelFormatError(r.path(), std::string(what) + " " + std::to_string(v) + " out of range " +
                                         std::to_string(min) + ".." + std::to_string(max));
  }
  return v;
}

std::uint8_t read_enum(PayloadReader& r, const char* what, std::uint8_t max) {
  const std::uint8_t v = r.u8();
  if (v > max) throw ModelFormatError(r.path(), std::string("unknown ") + what + " " + std::to_string(v));
  return v;
}

// A trained model's numbers are small; anything else is a corrupt file, refused before it
// can turn predictions into NaN.
constexpr float kMaxMagnitude = 1e6f;

void check_values(const PayloadReader& r, const std::vector<float>& v, float min, const char* what) {
  for (float x : v) {
    if (!(x >= min && x <= kMaxMagnitude)) {
      throw ModelFormatError(r.path(), std::string("corrupt ") + what + " value " + std::to_string(x));
    }
  }
}

FeatureExtractor read_features(PayloadReader& r) {
  FeatureOptions fo;
  fo.ngram_max = static_cast<int>(read_bounded(r, "ngram_max", 1, 6));
  fo.buckets = read_bounded(r, "buckets", 1, 1u << 28);
  fo.min_count = static_cast<int>(read_bounded(r, "min_count", 1, 1000000));
  fo.ngram_min_count = static_cast<int>(read_bounded(r, "ngram_min_count", 1, 1000000));
  fo.skip_bigrams = read_enum(r, "skip_bigrams flag", 1) == 1;
  // Each token takes at least its 8-byte length: count() refuses counts the file cannot hold.
  const std::uint64_t token_count = r.count(8);
  std::vector<std::string> tokens;
  tokens.reserve(token_count);
  for (std::uint64_t i = 0; i < token_count; ++i) tokens.push_back(r.str());
  const std::vector<std::uint32_t> kept = r.u32_array();
  if (tokens.size() + kept.size() > static_cast<std::size_t>(INT32_MAX)) throw ModelFormatError(r.path(), "too many rows");
  FeatureExtractor fx(fo);
  try {
    fx.set_tables(tokens, kept);
  } catch (const std::invalid_argument& e) {
    throw ModelFormatError(r.path(), e.what());
  }
  return fx;
}

void read_table(PayloadReader& r, Engine& e) {
  const std::size_t cells = static_cast<std::size_t>(e.rows()) * static_cast<std::size_t>(e.num_labels);
  const std::uint8_t storage = read_enum(r, "table storage", kStorageInt8);
  if (storage == kStorageF32) {
    e.table = r.f32_array();
    if (e.table.size() != cells) throw ModelFormatError(r.path(), "table size does not match rows x labels");
    check_values(r, e.table, -kMaxMagnitude, "table");
    return;
  }
  e.quantized = true;
  e.row_scales = r.f32_array();
  if (e.row_scales.size() != static_cast<std::size_t>(e.rows())) {
    throw ModelFormatError(r.path(), "row scale count does not match the rows");
  }
  check_values(r, e.row_scales, 0.0f, "row scale");
  if (r.count(1) != cells) throw ModelFormatError(r.path(), "quantized table size does not match rows x labels");
  e.codes.resize(cells);
  for (std::int8_t& c : e.codes) c = static_cast<std::int8_t>(r.u8());
  dequantize(e);
}

}  // namespace

void save_engine(const Engine& e, const std::string& path) {
  const FeatureOptions& fo = e.features.options();
  PayloadWriter w(path, kMagic, kVersion);
  w.u32(static_cast<std::uint32_t>(e.num_labels));
  w.u8(e.loss == Loss::kSoftmax ? 0 : 1);
  w.u8(e.pooling == Pooling::kMean ? 0 : 1);
  w.u32(static_cast<std::uint32_t>(fo.ngram_max));
  w.u32(fo.buckets);
  w.u32(static_cast<std::uint32_t>(fo.min_count));
  w.u32(static_cast<std::uint32_t>(fo.ngram_min_count));
  w.u8(fo.skip_bigrams ? 1 : 0);
  w.u64(e.features.tokens().size());
  for (const std::string& t : e.features.tokens()) w.str(t);
  w.u32_array(e.features.kept_buckets());
  w.f32_array(e.row_weights);
  if (!e.quantized) {
    w.u8(kStorageF32);
    w.f32_array(e.table);
  } else {
    w.u8(kStorageInt8);
    w.f32_array(e.row_scales);
    w.u64(e.codes.size());
    for (std::int8_t c : e.codes) w.u8(static_cast<std::uint8_t>(c));
  }
  w.finish();
}

Engine load_engine(const std::string& path, int expected_labels) {
  PayloadReader r(path, kMagic, kVersion);
  Engine e;
  e.num_labels = static_cast<int>(read_bounded(r, "label count", 1, 100000));
  if (e.num_labels != expected_labels) {
    throw ModelFormatError(path, "has " + std::to_string(e.num_labels) + " labels, the manifest " +
                                     std::to_string(expected_labels));
  }
  e.loss = read_enum(r, "loss", 1) == 0 ? Loss::kSoftmax : Loss::kOneVsAll;
  e.pooling = read_enum(r, "pooling", 1) == 0 ? Pooling::kMean : Pooling::kL2;
  e.features = read_features(r);
  e.row_weights = r.f32_array();
  if (!e.row_weights.empty() && e.row_weights.size() != static_cast<std::size_t>(e.rows())) {
    throw ModelFormatError(path, "row weight count does not match the rows");
  }
  check_values(r, e.row_weights, 0.0f, "row weight");
  read_table(r, e);
  r.expect_end();
  return e;
}

}  // namespace newscls::fasttext
