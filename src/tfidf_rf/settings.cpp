#include "tfidf_rf/settings.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "newscls/core/config.h"
#include "newscls/core/error.h"
#include "tfidf_rf/tfidf_rf.h"

namespace newscls::tfidf_rf {

int resolve_features_per_split(const std::string& spec, std::size_t n_features) {
  const double n = static_cast<double>(std::max<std::size_t>(n_features, 1));
  auto fail = [&spec]() {
    return ConfigError("max_features_per_split",
                       "'" + spec + "' is not sqrt, log2, sqrt*K, log2*K, a count >= 1 or a fraction < 1");
  };
  double base = 0, factor = 1;
  std::string number = spec;
  if (spec.rfind("sqrt", 0) == 0 || spec.rfind("log2", 0) == 0) {
    base = spec[0] == 's' ? std::sqrt(n) : std::log2(n);
    if (spec.size() == 4) {
      number.clear();
    } else if (spec[4] == '*') {
      number = spec.substr(5);
    } else {
      throw fail();
    }
  }
  if (!number.empty()) {
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(number, &used);
    } catch (const std::exception&) {
      throw fail();
    }
    // stod skips leading blanks and reads "1.5" whole; a count is neither.
    if (used != number.size() || !(v > 0) || !std::isfinite(v) || std::isspace(static_cast<unsigned char>(number[0]))) {
      throw fail();
    }
    if (base == 0 && v >= 1 && v != std::floor(v)) throw fail();
    if (base > 0) {
      factor = v;
    } else {
      base = v < 1 ? v * n : v;
    }
  }
  return static_cast<int>(std::clamp(std::round(base * factor), 1.0, n));
}

Settings parse_settings(const nlohmann::json& c) {
  Settings s;
  s.tokens.ngram_min = static_cast<int>(config_int(c, "ngram_min", 1, 8));
  s.tokens.ngram_max = static_cast<int>(config_int(c, "ngram_max", 1, 8));
  if (s.tokens.ngram_max < s.tokens.ngram_min) throw ConfigError("ngram_max", "must be >= ngram_min");
  // Absent from bundles written before it: they read punctuation as characters.
  s.tokens.fold_punctuation = c.contains("fold_punctuation") && config_bool(c, "fold_punctuation");
  s.subword = config_bool(c, "subword");
  s.subword_vocab_size = static_cast<int>(config_int(c, "subword_vocab_size", 100, 1000000));
  s.tfidf.min_df = static_cast<int>(config_int(c, "min_df", 1, 1000000000));
  s.tfidf.max_features = static_cast<int>(config_int(c, "max_features", 0, 100000000));
  s.tfidf.sublinear_tf = config_bool(c, "sublinear_tf");
  // Absent from bundles written before it: their rows are L2-normalised.
  s.tfidf.l2_normalize = !c.contains("l2_normalize") || config_bool(c, "l2_normalize");
  s.forest.n_trees = static_cast<int>(config_int(c, "n_trees", 1, 100000));
  s.forest.max_depth = static_cast<int>(config_int(c, "max_depth", 0, 100000));
  s.forest.min_samples_leaf = static_cast<int>(config_int(c, "min_samples_leaf", 1, 1000000000));
  s.forest.bootstrap = config_bool(c, "bootstrap");
  s.features_per_split = config_string(c, "max_features_per_split");
  resolve_features_per_split(s.features_per_split, 1000);  // validates the spelling now
  return s;
}

nlohmann::json default_config() {
  return {{"ngram_min", 1},
          {"ngram_max", 2},
          {"fold_punctuation", false},
          {"subword", false},
          {"subword_vocab_size", 8000},
          {"min_df", 2},
          {"max_features", 0},
          {"sublinear_tf", true},
          {"l2_normalize", false},
          {"n_trees", 100},
          {"max_depth", 0},
          {"min_samples_leaf", 3},
          {"max_features_per_split", "8"},
          {"bootstrap", true}};
}

}  // namespace newscls::tfidf_rf
