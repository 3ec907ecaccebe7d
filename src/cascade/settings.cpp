#include "cascade/settings.h"

#include "cascade/cascade.h"

namespace newscls::cascade {

const ConfigTable<Settings>& settings_table() {
  using K = ConfigKey;
  static const ConfigTable<Settings> table(
      "cascade",
      {
          {K::text(
               "members", "fasttext,bert",
               "Trained bundle directories, comma-separated, cheapest first (2 or 3); copied into the bundle. A bare "
               "name that is no folder here is looked for next to the output folder; in a pipeline run, a bare name "
               "that is a stage of the run is that stage's bundle in the run folder, so the default chains the "
               "run's own fasttext and bert."),
           field(&Settings::members)},
          {K::number("last_share", 1.0, 0.0, 1.0,
                     "At most this share of dev titles may reach the last member (e.g. 0.15 for an LLM)."),
           field(&Settings::last_share)},
          {K::integer("candidates", 40, 2, 1000,
                      "Threshold candidates per member: quantiles of its calibrated dev scores."),
           field(&Settings::candidates)},
          {K::number(
               "slack", 0.005, 0.0, 1.0,
               "Accept a dev accuracy up to this much (a share of the titles) below the best thresholds' when that "
               "sends fewer titles on."),
           field(&Settings::slack)},
          {K::choice(
               "combine", "product", {"product", "last"},
               "\"product\": a title sent on gets the class of highest product of the calibrated probabilities of "
               "the members that saw it; \"last\": the last of them answers alone."),
           field(&Settings::combine)},
      });
  return table;
}

Settings parse_settings(const nlohmann::json& config) { return settings_table().parse(config); }

nlohmann::json default_config() { return settings_table().documented(); }

}  // namespace newscls::cascade
