#include "fasttext/settings.h"

#include <algorithm>

#include <spdlog/spdlog.h>

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

const ConfigTable<Settings>& settings_table() {
  using K = ConfigKey;
  static const ConfigTable<Settings> table(
      "fasttext",
      {
          {K::integer("dim", 50, 1, 1024,
                      "Embedding size of every character and n-gram row during training; 50 is as accurate as 100 here "
                      "and faster."),
           field(&Settings::dim)},
          {K::integer("epochs", 10, 1, 1000, "Passes over the training titles."), field(&Settings::epochs)},
          {K::number("lr", 0.5, 1e-6, 100.0, "Start learning rate of SGD; decays linearly to 0 over all epochs."),
           field(&Settings::lr)},
          {K::integer("ngram_max", 3, 1, 6,
                      "Hashed character n-grams of orders 2..ngram_max are features besides single characters (1 = "
                      "characters only)."),
           field(&Settings::ngram_max)},
          // Ids are int32: vocabulary plus kept buckets must stay below 2^31.
          {K::integer("buckets", 1 << 21, 1, 1LL << 28,
                      "Hash space of the n-grams. Only buckets that training titles fill get an embedding row, so this "
                      "costs 4 bytes per bucket, not dim floats."),
           field(&Settings::buckets)},
          {K::integer("min_count", 1, 1, 1000000,
                      "A character is a feature when it appears at least this often in the training titles."),
           field(&Settings::min_count)},
          {K::integer(
               "ngram_min_count", 2, 1, 1000000,
               "An n-gram bucket gets a row when training titles fill it at least this often; 2 halves the model "
               "at no loss of accuracy here."),
           field(&Settings::ngram_min_count)},
          {K::boolean("skip_bigrams", false, "Also hash pairs of characters one apart (a_c)."),
           field(&Settings::skip_bigrams)},
          {K::choice(
               "loss", "ova", {"softmax", "ova"},
               "\"softmax\" (one distribution over the classes) or \"ova\" (one-vs-all sigmoids, normalised to sum "
               "to 1 at prediction)."),
           field_as(&Settings::loss, parse_loss, loss_name)},
          {K::boolean("idf", true,
                      "Weight every row by its smoothed inverse document frequency in the pooled sum (TF-IDF-like "
                      "features)."),
           field(&Settings::idf)},
          {K::choice(
               "pooling", "mean", {"mean", "l2"},
               "\"mean\": divide the weighted sum by the sum of weights (fastText's average); \"l2\": by their L2 "
               "norm."),
           field_as(&Settings::pooling, parse_pooling, pooling_name)},
          {K::number("dropout", 0.2, 0.0, 0.9,
                     "Probability of leaving out each feature of a training title at each step; a regulariser."),
           field(&Settings::dropout)},
          {K::number("label_smoothing", 0.0, 0.0, 0.5, "Training targets become (1 - eps) one-hot + eps / classes."),
           field(&Settings::label_smoothing)},
          // Absent from bundles written before it: they read punctuation as characters.
          {K::boolean("fold_punctuation", false,
                      "Punctuation except the ASCII marks inside numbers and names (. _ % - / ' & # @ * and backslash) "
                      "reads as a space, as in THUCNews, which separates clauses with spaces where other outlets write "
                      "commas, question and exclamation marks. Off: it cost 0.2 points of dev accuracy (0.9071 vs "
                      "0.9092) and was not found to help on dev-derived titles.")
               .optional(),
           field(&Settings::fold_punctuation)},
          {K::integer("ensemble", 1, 1, 16,
                      "Networks trained one after another with different seeds on the same features; their logits are "
                      "averaged (folded into one table, so prediction costs the same)."),
           field(&Settings::ensemble)},
          {K::integer(
               "threads", 0, 0, 1024,
               "Ignored: --threads sets the training and prediction threads (the flag wins). Kept so bundles "
               "written with it still load; a value other than 0 that disagrees with --threads is ignored with a "
               "warning."),
           field(&Settings::threads)},
          {K::boolean("autotune", false,
                      "Search lr, epochs, dropout, dim, ngram_max and ngram_min_count on the dev set within "
                      "autotune_seconds, then train with the best; the trials go into the manifest."),
           field(&Settings::autotune)},
          {K::number("autotune_seconds", 120, 1.0, 86400.0, "Time budget of the autotune search in seconds."),
           field(&Settings::autotune_seconds)},
          {K::boolean(
               "quantize", false,
               "Store the folded table as int8 with a scale per row, dropping the least influential rows when it "
               "would exceed about 8.5 MB (a bundle under 10 MB)."),
           field(&Settings::quantize)},
          {K::integer("quantize_keep_rows", 0, 0, 1LL << 30,
                      "Rows kept by quantize; 0 = as many as fit in about 8.5 MB."),
           field(&Settings::quantize_keep_rows)},
      });
  return table;
}

nlohmann::json settings_defaults() { return settings_table().defaults(); }

Settings parse_settings(const nlohmann::json& config) { return settings_table().parse(config); }

nlohmann::json to_json(const Settings& s) { return settings_table().to_json(s); }

}  // namespace newscls::fasttext
