#include "pipeline/stage_facts.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "newscls/core/atomic_file.h"
#include "newscls/core/bundle.h"
#include "newscls/core/bundle_files.h"
#include "newscls/core/error.h"

namespace fs = std::filesystem;

namespace newscls {
namespace {

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  std::string field;
  while (std::getline(in, field, '\t')) fields.push_back(field);
  return fields;
}

std::map<std::size_t, StagePrediction> read_predictions(const std::string& path) {
  std::map<std::size_t, StagePrediction> out;
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    const std::vector<std::string> f = split_tabs(line);
    if (f.size() < 5) continue;
    out[std::stoul(f[0])] = {f[1], f[2], f[4]};
  }
  return out;
}

}  // namespace

StageFacts read_stage_facts(const StageResult& result, const std::string& run_dir) {
  StageFacts facts;
  facts.result = result;
  facts.dir = run_dir + "/" + result.stage;
  if (result.status != StageStatus::kDone && result.status != StageStatus::kResumed) return facts;
  try {
    facts.metrics = nlohmann::json::parse(read_file(facts.dir + "/" + kMetricsFile));
    facts.has_metrics = true;
    const Bundle bundle = Bundle::open(facts.dir);
    facts.bundle_bytes = bundle.total_bytes();
    facts.confusion_svg = read_file(facts.dir + "/confusion.svg");
    facts.predictions = read_predictions(facts.dir + "/predictions.tsv");
    if (fs::exists(facts.dir + "/compression.json")) {
      facts.compression = nlohmann::json::parse(read_file(facts.dir + "/compression.json"));
    }
  } catch (const std::exception& e) {
    facts.problem = std::string("report could not read the stage: ") + e.what();
  }
  return facts;
}

}  // namespace newscls
