// The tfidf-rf family's config: its table of keys (configs/tfidf-rf.json is generated from it)
// and their validation into Settings.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "newscls/core/config_table.h"
#include "tfidf_rf/features.h"
#include "tfidf_rf/forest.h"
#include "tfidf_rf/tfidf.h"

namespace newscls::tfidf_rf {

// Filled from settings_table() by parse_settings; the members of tokens, tfidf and forest
// that are no config key keep their own defaults.
struct Settings {
  TokenOptions tokens;
  bool subword{};
  int subword_vocab_size{};
  TfidfOptions tfidf;
  ForestOptions forest;
  std::string features_per_split;
};

// Each key with its default, range and doc: the one source of all of them.
const ConfigTable<Settings>& settings_table();
// Throws ConfigError naming the key.
Settings parse_settings(const nlohmann::json& config);

// "sqrt", "log2", "sqrt*K", "log2*K", a count >= 1, or a fraction of the features < 1.
int resolve_features_per_split(const std::string& spec, std::size_t n_features);

}  // namespace newscls::tfidf_rf
