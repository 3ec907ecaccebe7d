#include "fasttext/settings.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "newscls/core/config.h"
#include "newscls/core/error.h"

namespace newscls::fasttext {

int run_threads(const Settings& s, int flag_threads) {
  if (s.threads != 0 && s.threads != flag_threads) {
    spdlog::warn("fasttext: the config key threads={} is ignored: --threads sets the threads ({} here)", s.threads,
                 flag_threads);
  }
  return std::max(1, flag_threads);
}

std::string pooling_name(Pooling pooling) { return pooling == Pooling::kMean ? "mean" : "l2"; }

Pooling parse_pooling(const std::string& name) {
  if (name == "mean") return Pooling::kMean;
  if (name == "l2") return Pooling::kL2;
  throw ConfigError("pooling", "must be \"mean\" or \"l2\", got \"" + name + "\"");
}

nlohmann::json to_json(const Settings& s) {
  return {
      {"dim", s.dim},
      {"epochs", s.epochs},
      {"lr", s.lr},
      {"ngram_max", s.ngram_max},
      {"buckets", s.buckets},
      {"min_count", s.min_count},
      {"ngram_min_count", s.ngram_min_count},
      {"skip_bigrams", s.skip_bigrams},
      {"loss", loss_name(s.loss)},
      {"idf", s.idf},
      {"pooling", pooling_name(s.pooling)},
      {"dropout", s.dropout},
      {"label_smoothing", s.label_smoothing},
      {"fold_punctuation", s.fold_punctuation},
      {"ensemble", s.ensemble},
      {"threads", s.threads},
      {"autotune", s.autotune},
      {"autotune_seconds", s.autotune_seconds},
      {"quantize", s.quantize},
      {"quantize_keep_rows", s.quantize_keep_rows},
  };
}

nlohmann::json settings_defaults() { return to_json(Settings{}); }

Settings parse_settings(const nlohmann::json& raw) {
  const nlohmann::json config = strip_docs(raw);
  check_config_keys(config, settings_defaults(), "fasttext");
  Settings s;
  s.dim = static_cast<int>(config_int(config, "dim", 1, 1024));
  s.epochs = static_cast<int>(config_int(config, "epochs", 1, 1000));
  s.lr = config_double(config, "lr", 1e-6, 100.0);
  s.ngram_max = static_cast<int>(config_int(config, "ngram_max", 1, 6));
  // Ids are int32: vocabulary plus kept buckets must stay below 2^31.
  s.buckets = static_cast<std::uint32_t>(config_int(config, "buckets", 1, 1ll << 28));
  s.min_count = static_cast<int>(config_int(config, "min_count", 1, 1000000));
  s.ngram_min_count = static_cast<int>(config_int(config, "ngram_min_count", 1, 1000000));
  s.skip_bigrams = config_bool(config, "skip_bigrams");
  s.loss = parse_loss(config_string(config, "loss"));
  s.idf = config_bool(config, "idf");
  s.pooling = parse_pooling(config_string(config, "pooling"));
  s.dropout = config_double(config, "dropout", 0.0, 0.9);
  s.label_smoothing = config_double(config, "label_smoothing", 0.0, 0.5);
  // Absent from bundles written before it: they read punctuation as characters.
  s.fold_punctuation = config.contains("fold_punctuation") && config_bool(config, "fold_punctuation");
  s.ensemble = static_cast<int>(config_int(config, "ensemble", 1, 16));
  s.threads = static_cast<int>(config_int(config, "threads", 0, 1024));
  s.autotune = config_bool(config, "autotune");
  s.autotune_seconds = config_double(config, "autotune_seconds", 1.0, 86400.0);
  s.quantize = config_bool(config, "quantize");
  s.quantize_keep_rows = static_cast<int>(config_int(config, "quantize_keep_rows", 0, 1ll << 30));
  return s;
}

}  // namespace newscls::fasttext
