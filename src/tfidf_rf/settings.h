// The tfidf-rf family's config: its documented defaults (configs/tfidf-rf.json mirrors them)
// and their validation into Settings.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "tfidf_rf/features.h"
#include "tfidf_rf/forest.h"
#include "tfidf_rf/tfidf.h"

namespace newscls::tfidf_rf {

struct Settings {
  TokenOptions tokens;
  bool subword = false;
  int subword_vocab_size = 0;
  TfidfOptions tfidf;
  ForestOptions forest;
  std::string features_per_split;
};

// Throws ConfigError naming the key.
Settings parse_settings(const nlohmann::json& config);

// "sqrt", "log2", "sqrt*K", "log2*K", a count >= 1, or a fraction of the features < 1.
int resolve_features_per_split(const std::string& spec, std::size_t n_features);

}  // namespace newscls::tfidf_rf
