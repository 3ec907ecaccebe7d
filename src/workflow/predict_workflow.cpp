#include <algorithm>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "newscls/workflow/predict_workflow.h"
#include "newscls/core/atomic_file.h"
#include "newscls/core/interrupt.h"
#include "newscls/core/parallel.h"
#include "newscls/core/progress.h"
#include "newscls/core/request_stats.h"
#include "newscls/workflow/predict_output.h"
#include "newscls/workflow/registry.h"
#include "workflow/score_tally.h"

namespace newscls {
namespace {

// What predict prints for a model that sends requests: a paid run's calls and cost, and the
// titles no reply answered (they read "unknown", marked "failed": true in JSONL).
void log_requests(const nlohmann::json& stats) {
  if (!sends_requests(stats)) return;  // a cascade without an LLM member says nothing
  spdlog::info("{}", requests_line(stats));
  if (const std::string failed = failed_titles_line(stats); !failed.empty()) {
    spdlog::warn("{}; run again to ask for them", failed);
  }
}

}  // namespace

std::size_t run_predict(const PredictRequest& r) {
  const Bundle bundle = Bundle::open(r.model_dir);
  require_classes(bundle);  // an encoder without a head said so only at its first batch: never for no titles
  auto model = load_classifier(bundle);
  model->set_threads(given_thread_count(r.threads));
  PredictionFormatter formatter(bundle.manifest().labels, r.format, r.top_k);
  formatter.set_min_score(r.min_score);
  formatter.set_stage_names(stage_names(bundle.manifest()));
  refuse_output_over_input(r.output, r.input);
  refuse_output_over_bundle("--output", r.output, r.model_dir);
  refuse_folder_spelling("--output", r.output);
  TitleReader reader(r.input);
  const std::string folder = r.output == "-" ? "" : std::filesystem::path(r.output).parent_path().string();
  if (!folder.empty()) make_directories(folder);  // as eval --out does
  AtomicOutputFile out(r.output);
  const std::size_t batch_size = std::max<std::size_t>(1, model->preferred_batch_size());
  std::vector<std::string> batch;
  std::string title, text;
  std::size_t total = 0;
  Progress progress("predict", 0);
  ScoreTally tally;
  for (bool more = true; more;) {
    batch.clear();
    while (batch.size() < batch_size && (more = reader.next(title))) batch.push_back(title);
    if (batch.empty()) break;
    check_interrupted();
    const std::vector<Prediction> predictions = predict_titles(*model, batch);
    text.clear();
    for (std::size_t i = 0; i < batch.size(); ++i) {
      formatter.append(text, batch[i], predictions[i]);
      tally.add(predictions[i]);
    }
    out.write(text);
    total += batch.size();
    progress.advance(batch.size());
  }
  progress.finish();
  out.commit();
  log_requests(model->run_stats());
  tally.warn_if_none_reach(r.min_score);
  spdlog::debug("predicted {} titles from {}", total, reader.path());
  return total;
}

}  // namespace newscls
