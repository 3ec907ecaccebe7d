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
// Payload "fasttext.bin" (PayloadWriter layout, magic "NCFT", version 1):
//   u32 num_labels, u8 loss (0 softmax, 1 ova), u8 pooling (0 mean, 1 l2)
//   u32 ngram_max, u32 buckets, u32 min_count, u32 ngram_min_count, u8 skip_bigrams
//   u64 token count, then each token as a string (UTF-8 character)
//   u32 array kept buckets (feature id vocab_size + i is bucket kept[i])
//   f32 array row weights (empty, or one per row)
//   u8 storage: 0 = f32 table: f32 array (rows x num_labels)
//               1 = int8 table: f32 array of row scales (rows), then u64 count + int8 bytes
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

namespace newscls::fasttext {

struct Engine {
  FeatureExtractor features;
  Loss loss = Loss::kSoftmax;
  Pooling pooling = Pooling::kMean;
  int num_labels = 0;
  std::vector<float> row_weights;  // empty = all 1
  std::vector<float> table;        // rows x num_labels
  // Set by quantize_table: the stored form, from which `table` is derived.
  bool quantized = false;
  std::vector<float> row_scales;
  std::vector<std::int8_t> codes;

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

// Rebuilds the float table from the int8 codes and row scales of a quantised engine.
void dequantize(Engine& engine);

void save_engine(const Engine& engine, const std::string& path);
// expected_labels: the bundle's label count, which the payload must match.
Engine load_engine(const std::string& path, int expected_labels);

}  // namespace newscls::fasttext
