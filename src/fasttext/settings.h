// The fasttext family's config: its table of keys (configs/fasttext.json is generated from it)
// and the validated, typed form the engine uses.
//
//   Settings s = parse_settings(config);     // ConfigError names the bad key
//   nlohmann::json back = to_json(s);
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "fasttext/model.h"
#include "newscls/core/config_table.h"

namespace newscls::fasttext {

// No defaults here: parse_settings fills every member from settings_table().
struct Settings {
  int dim{};
  int epochs{};
  double lr{};
  int ngram_max{};
  std::uint32_t buckets{};
  int min_count{};
  int ngram_min_count{};
  bool skip_bigrams{};
  Loss loss{};
  bool idf{};
  Pooling pooling{};
  double dropout{};
  double label_smoothing{};
  bool fold_punctuation{};  // normalize_title(title, true)
  int ensemble{};
  int threads{};  // ignored: --threads wins (see run_threads); kept so bundles load
  bool autotune{};
  double autotune_seconds{};
  bool quantize{};
  int quantize_keep_rows{};  // 0 = keep every row (see quantize.h)
};

// Each key with its default, range and doc: the one source of all of them.
const ConfigTable<Settings>& settings_table();
// The defaults without docs.
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
