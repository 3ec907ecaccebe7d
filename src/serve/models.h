// The models a server answers for: each bundle loaded once, with its labels (as JSON
// strings), its manifest's test metrics and its own micro-batcher. A ModelSet is
// immutable once built; a reload builds a whole new set and swaps it in, and the old one
// is destroyed (its batchers drained) once the last request using it has finished.
//
//   ModelSet set = load_model_set({"runs/fasttext", "runs/bert"}, settings, &metrics);
//   ServedModel& m = *set.at("fasttext");
//   auto f = m.batcher().submit(titles);
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "newscls/workflow/registry.h"
#include "serve/batcher.h"
#include "serve/metrics.h"

namespace newscls::serve {

// Builds a classifier from a bundle directory; tests pass their own.
using ModelLoader = std::function<std::unique_ptr<Classifier>(const std::string& dir, Manifest& manifest)>;

// The default: Bundle::open (verified) and load_classifier.
std::unique_ptr<Classifier> load_bundle(const std::string& dir, Manifest& manifest);

struct ModelSettings {
  BatchOptions batch;
  int threads = 1;  // for each model's forward pass
};

class ServedModel {
 public:
  ServedModel(std::string name, std::unique_ptr<Classifier> classifier, const Manifest& manifest,
              const ModelSettings& settings, ServeMetrics* metrics);
  const std::string& name() const { return name_; }
  const std::string& name_json() const { return name_json_; }
  const std::vector<std::string>& labels() const { return labels_; }
  const std::vector<std::string>& stage_names() const { return stage_names_; }
  // {"name", "family", "labels", "metrics": the manifest's test_* figures}
  const nlohmann::json& description() const { return description_; }
  MicroBatcher& batcher() { return *batcher_; }
  // Whether its LLM endpoint (an llm model's, a cascade's member's) is paused now, as its last
  // batch left it (Classifier::endpoint_paused_s); a pause ends by the clock. A reload's new
  // models start unpaused.
  bool endpoint_paused() const;

 private:
  using Clock = std::chrono::steady_clock;

  std::string name_, name_json_;
  std::vector<std::string> labels_, stage_names_;
  nlohmann::json description_;
  std::atomic<Clock::rep> paused_until_{0};  // Clock ticks; written after each batch, read by /metrics
  std::unique_ptr<Classifier> classifier_;
  std::unique_ptr<MicroBatcher> batcher_;  // declared last: drained before the classifier goes
};

using ModelSet = std::map<std::string, std::shared_ptr<ServedModel>>;

// The name a bundle is served under: its directory's last component.
std::string model_name(const std::string& dir);

// Loads every bundle, or throws the first failure (UsageError, before loading any, for one
// folder given twice; for two bundles with one name).
ModelSet load_model_set(const std::vector<std::string>& dirs, const ModelSettings& settings, const ModelLoader& loader,
                        ServeMetrics* metrics);

}  // namespace newscls::serve
