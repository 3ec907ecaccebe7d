// What the report needs to know of one finished stage, read back from its run folder.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "newscls/pipeline/pipeline.h"

namespace newscls {

struct StagePrediction {
  std::string truth, predicted, title;
};

struct StageFacts {
  StageResult result;
  std::string dir;
  bool has_metrics = false;
  nlohmann::json metrics;           // metrics.json
  std::uintmax_t bundle_bytes = 0;  // payloads, nested bundles' included
  std::string confusion_svg;
  std::map<std::size_t, StagePrediction> predictions;  // test index -> prediction
  nlohmann::json compression;                          // compression.json of a compression stage, else null
  std::string problem;                                 // what the report could not read, shown in its row
};

StageFacts read_stage_facts(const StageResult& result, const std::string& run_dir);

}  // namespace newscls
