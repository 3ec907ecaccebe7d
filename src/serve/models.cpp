#include "serve/models.h"

#include <filesystem>
#include <map>

#include "newscls/core/bundle.h"
#include "newscls/core/error.h"
#include "newscls/core/request_stats.h"
#include "newscls/workflow/predict_output.h"
#include "serve/api.h"

namespace newscls::serve {
namespace {

nlohmann::json describe(const std::string& name, const std::string& family, const Manifest& manifest) {
  nlohmann::json metrics = nlohmann::json::object();
  for (const auto& item : manifest.training.items()) {
    if (item.key().rfind("test_", 0) == 0) metrics[item.key()] = item.value();
  }
  return {{"name", name}, {"family", family}, {"labels", manifest.labels}, {"metrics", metrics}};
}

// Spellings of one folder ("runs/bert", "./runs/bert/", a link to it) are one bundle given
// twice: the name check below would load it first and then advise renaming a directory.
void refuse_repeated_dirs(const std::vector<std::string>& dirs) {
  std::map<std::filesystem::path, std::string> seen;
  for (const std::string& dir : dirs) {
    std::error_code error;
    std::filesystem::path folder = std::filesystem::weakly_canonical(std::filesystem::absolute(dir), error);
    if (error) folder = std::filesystem::absolute(dir).lexically_normal();
    if (folder.filename().empty()) folder = folder.parent_path();
    const auto [first, fresh] = seen.emplace(folder, dir);
    if (!fresh) {
      throw UsageError("--model-dir " + dir + " is the folder " + first->second +
                       " given again; give each bundle once");
    }
  }
}

// After each batch, thrown or not: a model that sends requests (an LLM, a cascade with one)
// adds the batch's counts to /metrics and starts counting again, so its run_stats (and the
// latencies they keep) do not grow for as long as the server runs; and its endpoint's pause
// is kept for /metrics to read.
class EndpointBookkeeping {
 public:
  using Clock = std::chrono::steady_clock;
  EndpointBookkeeping(Classifier& model, ServeMetrics* metrics, const std::string& name,
                      std::atomic<Clock::rep>& paused_until)
      : model_(model), metrics_(metrics), name_(name), paused_until_(paused_until) {}
  ~EndpointBookkeeping() {
    try {
      const auto pause =
          std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(model_.endpoint_paused_s()));
      paused_until_.store((Clock::now() + pause).time_since_epoch().count());
      const nlohmann::json stats = model_.run_stats();
      if (!sends_requests(stats)) return;
      if (metrics_ != nullptr) metrics_->record_requests(name_, stats);
      model_.reset_run_stats();
    } catch (const std::exception&) {  // counting must not turn a batch's answer into an error
    }
  }
  EndpointBookkeeping(const EndpointBookkeeping&) = delete;
  EndpointBookkeeping& operator=(const EndpointBookkeeping&) = delete;

 private:
  Classifier& model_;
  ServeMetrics* metrics_;
  const std::string& name_;
  std::atomic<Clock::rep>& paused_until_;
};

}  // namespace

std::unique_ptr<Classifier> load_bundle(const std::string& dir, Manifest& manifest) {
  const Bundle bundle = Bundle::open(dir);
  manifest = bundle.manifest();
  require_classes(bundle);  // else every request would fail
  return load_classifier(bundle);
}

ServedModel::ServedModel(std::string name, std::unique_ptr<Classifier> classifier, const Manifest& manifest,
                         const ModelSettings& settings, ServeMetrics* metrics)
    : name_(std::move(name)),
      name_json_(nlohmann::json(name_).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)),
      labels_(manifest.labels),
      stage_names_(newscls::stage_names(manifest)),
      description_(describe(name_, classifier->family(), manifest)),
      classifier_(std::move(classifier)) {
  classifier_->set_threads(settings.threads);
  classifier_->tolerate_outages();  // failed titles are judged per request (Server::classify)
  Classifier* model = classifier_.get();
  MicroBatcher::BatchFn on_batch;
  if (metrics) on_batch = [metrics, n = name_](std::size_t titles) { metrics->record_batch(n, titles); };
  // The batcher is destroyed first (declared last), so `this` outlives every batch.
  batcher_ = std::make_unique<MicroBatcher>(
      [this, model, metrics, n = name_](const std::vector<std::string>& titles) {
        const EndpointBookkeeping bookkeeping(*model, metrics, n, paused_until_);
        return predict_titles(*model, titles);
      },
      settings.batch, std::move(on_batch));
}

bool ServedModel::endpoint_paused() const { return Clock::now().time_since_epoch().count() < paused_until_.load(); }

std::string model_name(const std::string& dir) {
  std::filesystem::path p = std::filesystem::absolute(dir).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();  // "runs/bert/" is named "bert"
  return p.filename().string();
}

ModelSet load_model_set(const std::vector<std::string>& dirs, const ModelSettings& settings, const ModelLoader& loader,
                        ServeMetrics* metrics) {
  refuse_repeated_dirs(dirs);
  ModelSet set;
  for (const std::string& dir : dirs) {
    const std::string name = model_name(dir);
    if (set.count(name)) throw UsageError("two bundles are named \"" + name + "\" (" + dir + "); rename one directory");
    Manifest manifest;
    std::unique_ptr<Classifier> classifier = loader(dir, manifest);
    set[name] = std::make_shared<ServedModel>(name, std::move(classifier), manifest, settings, metrics);
  }
  return set;
}

}  // namespace newscls::serve
