#include "pipeline/stage_facts.h"

#include <filesystem>

#include "newscls/core/atomic_file.h"
#include "newscls/core/bundle.h"
#include "newscls/core/bundle_files.h"
#include "newscls/core/data.h"
#include "newscls/core/error.h"

namespace fs = std::filesystem;

namespace newscls {
namespace {

std::map<std::size_t, StagePrediction> read_predictions(const std::string& path) {
  std::map<std::size_t, StagePrediction> out;
  if (!fs::exists(path)) return out;
  TitleReader in(path);
  std::string line;
  in.next_line(line);  // header
  while (in.next_line(line)) {
    const std::vector<std::string> f = split_fields(line, '\t');
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
