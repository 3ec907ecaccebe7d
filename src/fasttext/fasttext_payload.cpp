// fasttext.bin: writing version 2 (blocks, laid out in engine.h), reading versions 1 and 2,
// every field checked.
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "fasttext/engine.h"
#include "newscls/core/binary_io.h"
#include "newscls/core/error.h"

namespace newscls::fasttext {
namespace {

constexpr char kMagic[4] = {'N', 'C', 'F', 'T'};
constexpr std::uint32_t kVersion = 2;
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

// One pass over the values' bits (integers vectorise; float compares with NaN did not, and
// cost 20 ms on a 20 MB table): |x| <= kMaxMagnitude is an unsigned compare of the bits
// without their sign, which NaN and infinities fail. Only a corrupt file takes the slow pass
// that names the value.
void check_values(const PayloadReader& r, const PayloadArray<float>& v, float min, const char* what) {
  std::uint32_t limit;
  std::memcpy(&limit, &kMaxMagnitude, 4);
  const auto* bits = reinterpret_cast<const std::uint32_t*>(v.data());
  unsigned bad = 0;
  for (std::size_t i = 0; i < v.size(); ++i) bad |= static_cast<unsigned>((bits[i] & 0x7fffffffu) > limit);
  if (min >= 0) {
    for (float x : v) bad |= static_cast<unsigned>(x < min);
  }
  if (bad == 0) return;
  for (float x : v) {
    if (!(x >= min && x <= kMaxMagnitude)) {
      throw ModelFormatError(r.path(), std::string("corrupt ") + what + " value " + std::to_string(x));
    }
  }
}

// The fields both versions start with; the label count must be the manifest's.
Engine read_header(PayloadReader& r, int expected_labels, FeatureOptions& fo) {
  Engine e;
  e.num_labels = static_cast<int>(read_bounded(r, "label count", 1, 100000));
  if (e.num_labels != expected_labels) {
    throw ModelFormatError(
        r.path(), "has " + std::to_string(e.num_labels) + " labels, the manifest " + std::to_string(expected_labels));
  }
  e.loss = read_enum(r, "loss", 1) == 0 ? Loss::kSoftmax : Loss::kOneVsAll;
  e.pooling = read_enum(r, "pooling", 1) == 0 ? Pooling::kMean : Pooling::kL2;
  fo.ngram_max = static_cast<int>(read_bounded(r, "ngram_max", 1, 6));
  fo.buckets = read_bounded(r, "buckets", 1, 1u << 28);
  fo.min_count = static_cast<int>(read_bounded(r, "min_count", 1, 1000000));
  fo.ngram_min_count = static_cast<int>(read_bounded(r, "ngram_min_count", 1, 1000000));
  fo.skip_bigrams = read_enum(r, "skip_bigrams flag", 1) == 1;
  return e;
}

FeatureExtractor make_features(const PayloadReader& r, const FeatureOptions& fo, const std::vector<std::string>& tokens,
                               PayloadArray<std::uint32_t> kept) {
  if (tokens.size() + kept.size() > static_cast<std::size_t>(INT32_MAX)) {
    throw ModelFormatError(r.path(), "too many rows");
  }
  FeatureExtractor fx(fo);
  try {
    fx.set_tables(tokens, std::move(kept));
  } catch (const std::invalid_argument& e) {
    throw ModelFormatError(r.path(), e.what());
  }
  return fx;
}

void check_row_weight_count(const PayloadReader& r, std::size_t weights, const Engine& e) {
  if (weights != 0 && weights != static_cast<std::size_t>(e.rows())) {
    throw ModelFormatError(r.path(), "row weight count does not match the rows");
  }
}

std::size_t cell_count(const Engine& e) {
  return static_cast<std::size_t>(e.rows()) * static_cast<std::size_t>(e.num_labels);
}

// Version 1: field by field.
void read_table_v1(PayloadReader& r, Engine& e) {
  const std::size_t cells = cell_count(e);
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
  std::vector<std::int8_t> codes(cells);
  for (std::int8_t& c : codes) c = static_cast<std::int8_t>(r.u8());
  e.codes = std::move(codes);
  dequantize(e);
}

void read_v1(PayloadReader& r, Engine& e, const FeatureOptions& fo) {
  // Each token takes at least its 8-byte length: count() refuses counts the file cannot hold.
  const std::uint64_t token_count = r.count(8);
  std::vector<std::string> tokens;
  tokens.reserve(token_count);
  for (std::uint64_t i = 0; i < token_count; ++i) tokens.push_back(r.str());
  e.features = make_features(r, fo, tokens, r.u32_array());
  e.row_weights = r.f32_array();
  check_row_weight_count(r, e.row_weights.size(), e);
  check_values(r, e.row_weights, 0.0f, "row weight");
  read_table_v1(r, e);
}

// Version 2: blocks where they lie in the file as read, checked in passes over each.
std::vector<std::string> read_tokens(PayloadReader& r, std::uint64_t count, std::uint64_t bytes) {
  const PayloadArray<std::uint32_t> offsets = r.block<std::uint32_t>(count + 1);
  const PayloadArray<char> text = r.block<char>(bytes);
  if (!offsets_delimit(offsets, bytes)) {
    throw ModelFormatError(r.path(), "token offsets do not delimit the token bytes");
  }
  std::vector<std::string> tokens;
  tokens.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) tokens.emplace_back(text.data() + offsets[i], offsets[i + 1] - offsets[i]);
  return tokens;
}

void read_table_v2(PayloadReader& r, Engine& e, std::uint8_t storage) {
  if (storage == kStorageF32) {
    e.table = r.block<float>(cell_count(e));
    check_values(r, e.table, -kMaxMagnitude, "table");
    return;
  }
  e.quantized = true;
  e.row_scales = r.block<float>(static_cast<std::uint64_t>(e.rows()));
  check_values(r, e.row_scales, 0.0f, "row scale");
  e.codes = r.block<std::int8_t>(cell_count(e));
  dequantize(e);
}

void read_v2(PayloadReader& r, Engine& e, const FeatureOptions& fo) {
  const std::uint8_t storage = read_enum(r, "table storage", kStorageInt8);
  const std::uint64_t token_count = r.u64(), token_bytes = r.u64(), kept_count = r.u64(), weight_count = r.u64();
  if (token_count > INT32_MAX || kept_count > INT32_MAX - token_count) {
    throw ModelFormatError(r.path(), "too many rows");
  }
  const std::vector<std::string> tokens = read_tokens(r, token_count, token_bytes);
  e.features = make_features(r, fo, tokens, r.block<std::uint32_t>(kept_count));
  if (!e.features.ids_by_bucket().empty()) throw ModelFormatError(r.path(), "kept buckets are not increasing");
  check_row_weight_count(r, weight_count, e);
  e.row_weights = r.block<float>(weight_count);
  check_values(r, e.row_weights, 0.0f, "row weight");
  read_table_v2(r, e, storage);
}

// The tokens end to end, and where each starts (one more offset: the end).
struct TokenBlocks {
  std::vector<std::uint32_t> offsets{0};
  std::string bytes;
};

TokenBlocks token_blocks(const std::vector<std::string>& tokens) {
  TokenBlocks out;
  for (const std::string& t : tokens) {
    out.bytes += t;
    out.offsets.push_back(static_cast<std::uint32_t>(out.bytes.size()));
  }
  return out;
}

}  // namespace

void write_header(PayloadWriter& w, const Engine& e) {
  const FeatureOptions& fo = e.features.options();
  w.u32(static_cast<std::uint32_t>(e.num_labels));
  w.u8(e.loss == Loss::kSoftmax ? 0 : 1);
  w.u8(e.pooling == Pooling::kMean ? 0 : 1);
  w.u32(static_cast<std::uint32_t>(fo.ngram_max));
  w.u32(fo.buckets);
  w.u32(static_cast<std::uint32_t>(fo.min_count));
  w.u32(static_cast<std::uint32_t>(fo.ngram_min_count));
  w.u8(fo.skip_bigrams ? 1 : 0);
}

void save_engine(const Engine& engine, const std::string& path) {
  const Engine e = in_bucket_order(engine);
  const TokenBlocks tokens = token_blocks(e.features.tokens());
  PayloadWriter w(path, kMagic, kVersion);
  write_header(w, e);
  w.u8(e.quantized ? kStorageInt8 : kStorageF32);
  w.u64(e.features.tokens().size());
  w.u64(tokens.bytes.size());
  w.u64(e.features.kept_buckets().size());
  w.u64(e.row_weights.size());
  w.block(tokens.offsets);
  w.block(tokens.bytes.data(), tokens.bytes.size());
  w.block(e.features.kept_buckets());
  w.block(e.row_weights);
  if (!e.quantized) {
    w.block(e.table);
  } else {
    w.block(e.row_scales);
    w.block(e.codes);
  }
  w.finish();
}

Engine load_engine(const std::string& path, int expected_labels) {
  PayloadReader r(path, kMagic, kVersion);
  FeatureOptions fo;
  Engine e = read_header(r, expected_labels, fo);
  if (r.version() <= 1) {
    read_v1(r, e, fo);
  } else {
    read_v2(r, e, fo);
  }
  r.expect_end();
  return e;
}

}  // namespace newscls::fasttext
