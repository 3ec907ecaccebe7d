// A trained fasttext model as used for prediction, and its payload.
//
// Training learns embeddings E (rows x dim) and an output layer W (labels x dim). A title's
// scores are W * (sum_i w_i E[id_i]) / Z, which equals (sum_i w_i T[id_i]) / Z with the
// folded table T = E * W^T (rows x labels). Prediction and the bundle keep only T: ten
// floats per row instead of dim, so prediction reads a tenth of the memory and the bundle
// is a tenth of the size, with the same scores up to float rounding. An ensemble of
// differently seeded networks folds into one table by averaging their tables, i.e. their
// logits.
//
// Payload "fasttext.bin", magic "NCFT", version 2 (PayloadWriter layout: header fields, then
// blocks, each at a multiple of its element size after zero padding):
//   u32 num_labels, u8 loss (0 softmax, 1 ova), u8 pooling (0 mean, 1 l2)
//   u32 ngram_max, u32 buckets, u32 min_count, u32 ngram_min_count, u8 skip_bigrams
//   u8 storage (0 f32 table, 1 int8 table)
//   u64 token_count, u64 token_bytes, u64 kept_count, u64 row_weight_count (0, or one per row)
//   rows = token_count + kept_count, cells = rows x num_labels
//   block u32[token_count + 1]  token offsets into the token bytes: 0, non-decreasing, token_bytes
//   block u8[token_bytes]       the tokens (UTF-8 characters) end to end
//   block u32[kept_count]       kept buckets, increasing (feature id token_count + i is bucket
//                               kept[i]: the n-gram rows are saved in bucket order)
//   block f32[row_weight_count] row weights
//   storage 0: block f32[cells] table
//   storage 1: block f32[rows] row scales, block i8[cells] codes
// Loading maps the file, checks the header and the blocks (offsets, buckets increasing and
// in range, finite values within bounds) and uses the blocks where they lie: the kept buckets
// are the bucket lookup (bucket_index.h), the table is read where it lies.
// Version 1 (still read) had the same header fields without storage and the counts, then
// each token as a string, the kept buckets as a u32 array, the row weights as an f32 array,
// u8 storage, then the f32 table as an array, or the row scales as an f32 array and the codes
// as u64 count + int8 bytes.
// Every count is checked against the header and the bytes left; a bad file is a
// ModelFormatError naming it.
//
//   e.table = fold_table(network);   save_engine(e, path);
//   Predictor p(e);  const std::vector<float>& probs = p.probs(normalize_title(t));
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fasttext/features.h"
#include "fasttext/model.h"
#include "newscls/core/binary_io.h"

namespace newscls::fasttext {

struct Engine {
  FeatureExtractor features;
  Loss loss = Loss::kSoftmax;
  Pooling pooling = Pooling::kMean;
  int num_labels = 0;
  // Built in memory by training, or blocks of the payload as read from disk.
  PayloadArray<float> row_weights;  // empty = all 1
  PayloadArray<float> table;        // rows x num_labels
  // Set by quantize_table: the stored form, from which `table` is derived.
  bool quantized = false;
  PayloadArray<float> row_scales;
  PayloadArray<std::int8_t> codes;

  std::int64_t rows() const { return features.rows(); }
};

// The folded table E * W^T of a trained network (rows x labels).
std::vector<float> fold_table(const Model& network);

// Keeps only the rows where keep[row] is true (features and table alike).
void prune_rows(Engine& engine, const std::vector<bool>& keep);

// Rounds the table to int8 with one scale per row, as it will be stored, so predictions
// before saving and after loading agree exactly.
void quantize_table(Engine& engine);

// Per-thread prediction state over a shared Engine; probs() allocates nothing once warm.
class Predictor {
 public:
  explicit Predictor(const Engine& engine);
  // Class probabilities of an already normalised title; uniform when no feature is known.
  const std::vector<float>& probs(std::string_view normalized);

 private:
  const Engine& engine_;
  std::vector<std::int32_t> ids_;
  std::vector<float> probs_;
};

// The same model with its n-gram rows in bucket order (the kept buckets increasing), as it is
// saved: loading then uses the kept-buckets block itself for the lookup. Prediction sums the
// same rows in the same order whatever their ids, so the scores are identical.
Engine in_bucket_order(const Engine& engine);

// Rebuilds the float table from the int8 codes and row scales of a quantised engine.
void dequantize(Engine& engine);

void save_engine(const Engine& engine, const std::string& path);
// The fields every payload version starts with, after magic and version (read_header reads them).
void write_header(PayloadWriter& w, const Engine& e);
// expected_labels: the bundle's label count, which the payload must match.
Engine load_engine(const std::string& path, int expected_labels);

}  // namespace newscls::fasttext
