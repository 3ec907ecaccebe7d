// The fasttext family's config: defaults (mirrored in configs/fasttext.json) and the
// validated, typed form the engine uses.
//
//   Settings s = parse_settings(config);     // ConfigError names the bad key
//   nlohmann::json back = to_json(s);
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "fasttext/model.h"

namespace newscls::fasttext {

struct Settings {
  int dim = 50;
  int epochs = 10;
  double lr = 0.5;
  int ngram_max = 3;
  std::uint32_t buckets = 1u << 21;
  int min_count = 1;
  int ngram_min_count = 2;
  bool skip_bigrams = false;
  Loss loss = Loss::kOneVsAll;
  bool idf = true;
  Pooling pooling = Pooling::kMean;
  double dropout = 0.2;
  double label_smoothing = 0.0;
  bool fold_punctuation = false;  // normalize_title(title, true); bundles without the key: false
  int ensemble = 1;
  int threads = 0;               // ignored: --threads wins (see run_threads); kept so bundles load
  bool autotune = false;
  double autotune_seconds = 120;
  bool quantize = false;
  int quantize_keep_rows = 0;    // 0 = keep every row (see quantize.h)
};

nlohmann::json settings_defaults();
Settings parse_settings(const nlohmann::json& config);
nlohmann::json to_json(const Settings& s);

// The threads a fasttext model trains and predicts with: --threads (flag_threads, resolved),
// always. The config key `threads` only remains because bundles written before carry it in
// their manifest; a value other than 0 that disagrees with the flag is ignored with a warning.
int run_threads(const Settings& s, int flag_threads);

std::string pooling_name(Pooling pooling);
Pooling parse_pooling(const std::string& name);

}  // namespace newscls::fasttext
