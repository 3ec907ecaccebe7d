#include <filesystem>
#include <optional>

#include <spdlog/spdlog.h>

#include "newscls/workflow/train_workflow.h"
#include "newscls/core/atomic_file.h"
#include "newscls/core/bundle.h"
#include "newscls/core/bundle_files.h"
#include "newscls/core/config.h"
#include "newscls/core/error.h"
#include "newscls/core/parallel.h"
#include "newscls/core/sha256.h"
#include "newscls/core/stopwatch.h"
#include "newscls/workflow/eval_workflow.h"
#include "newscls/workflow/registry.h"
#include "workflow/audit_edits.h"
#include "workflow/calibration.h"
#include "workflow/self_training.h"
#include "workflow/splits.h"
#include "workflow/train_steps.h"
#include "workflow/work_folder.h"

namespace fs = std::filesystem;

namespace newscls {
namespace {

nlohmann::json skipped_lines(const Splits& s) {
  return {{"train", s.train.skipped_lines}, {"dev", s.dev.skipped_lines}, {"test", s.test.skipped_lines}};
}

}  // namespace

nlohmann::json fit_calibration_facts(const EvalOutcome& dev, Temperature& t) {
  if (dev.metrics.calibration.count == 0) return nullptr;
  std::vector<std::vector<float>> probs;
  for (const Prediction& p : dev.predictions) probs.push_back(p.probs);
  t = fit_temperature(dev.truth, probs);
  // Both NLLs as compute_calibration counts them (an unknown answer as p = kNllFloor), so
  // that before and after compare like for like.
  const double nll_before = dev.metrics.calibration.nll;
  for (auto& row : probs) apply_temperature(row, t);
  const CalibrationMetrics after = compute_calibration(dev.truth, probs);
  spdlog::info("calibration on dev: T {:.3f} floor {:g}; ECE {:.4f} -> {:.4f}, NLL {:.4f} -> {:.4f}", t.temperature,
               t.floor, dev.metrics.calibration.ece, after.ece, nll_before, after.nll);
  return {{"temperature", t.temperature},
          {"floor", t.floor},
          {"method", "temperature scaling, NLL on dev"},
          {"dev_titles", dev.truth.size()},
          {"dev_accuracy", dev.metrics.accuracy},
          {"dev_nll_before", nll_before},
          {"dev_nll_after", after.nll},
          {"dev_ece_before", dev.metrics.calibration.ece},
          {"dev_ece_after", after.ece}};
}

namespace {

// See TrainContext::given_keys. A config file's key at its default value is not counted:
// configs/<model>.json lists every key with its default, and a copy of it gives nothing.
std::vector<std::string> given_keys(const TrainRequest& request) {
  std::vector<std::string> keys;
  if (!request.config_file.empty()) {
    const nlohmann::json file = read_config_file(request.config_file);
    const nlohmann::json defaults = default_config(request.family);
    for (const auto& item : file.items()) {
      if (!defaults.contains(item.key()) || defaults.at(item.key()) != item.value()) keys.push_back(item.key());
    }
  }
  for (const std::string& o : request.overrides) keys.push_back(o.substr(0, o.find('=')));
  return keys;
}

TrainContext context_for(const TrainRequest& request, const Splits& splits, const std::string& out_dir, int threads,
                         bool resume) {
  TrainContext ctx;
  ctx.train = &splits.train;
  ctx.dev = &splits.dev;
  ctx.labels = &splits.labels;
  ctx.seed = request.seed;
  ctx.threads = threads;
  ctx.out_dir = out_dir;
  ctx.work_dir = work_dir_for(out_dir);
  ctx.resume = resume;
  ctx.init_dir = request.init_dir;
  ctx.given_keys = given_keys(request);
  ctx.device = request.device;
  ctx.distributed = request.distributed;
  return ctx;
}

Manifest manifest_for(const Classifier& model, const Splits& splits, const nlohmann::json& facts, const Metrics& test,
                      const std::string& data_sha256) {
  Manifest manifest;
  manifest.family = model.family();
  manifest.labels = splits.labels.names;
  manifest.config = model.config();
  manifest.training = facts;
  manifest.training["test_accuracy"] = test.accuracy;
  manifest.training["test_macro_f1"] = test.macro_f1;
  manifest.training["data"] = splits.source;
  manifest.training["data_sha256"] = data_sha256;
  if (!splits.facts.is_null()) manifest.training["data_files"] = splits.facts;
  return manifest;
}

// By default every family is calibrated, except one whose predictions are paid requests (an
// LLM), where each dev title would cost a call; calibrate=true fits it anyway. A family
// calibrated by its members (a cascade) has no fit of its own.
bool wants_calibration(CalibrateSetting setting, const Classifier& model, nlohmann::json& facts) {
  const Family& family = find_family(model.family());
  if (setting == CalibrateSetting::kOff || family.calibrated_by_members()) return false;
  if (setting == CalibrateSetting::kAuto && family.pays_per_prediction()) {
    facts["calibration_skipped"] = "each dev title would be a paid request; --set calibrate=true fits it";
    spdlog::info("calibration skipped: {}", facts["calibration_skipped"].get<std::string>());
    return false;
  }
  return true;
}

// Options a family would ignore are refused, not dropped silently.
void check_family_options(const TrainRequest& request) {
  const Family& family = find_family(request.family);
  if (!request.init_dir.empty() && !family.trains_from_init()) {
    throw UsageError("--init: family '" + request.family + "' does not start from another bundle");
  }
  if (request.resume && !family.resumes()) {
    throw UsageError("--resume: family '" + request.family + "' keeps no checkpoints to continue; train without it");
  }
  if (request.device != "cpu" && !family.trains_on_device()) {
    throw UsageError("--device " + request.device + ": family '" + request.family + "' trains on the CPU only");
  }
}

void check_distributed(const TrainRequest& request) {
  const DistributedSettings& d = request.distributed;
  if (d.rank < 0 || d.rank >= d.world_size) {
    throw UsageError("RANK " + std::to_string(d.rank) + " is outside 0.." + std::to_string(d.world_size - 1));
  }
  if (d.enabled() && !find_family(request.family).trains_distributed()) {
    throw UsageError("family '" + request.family + "' cannot train distributed (WORLD_SIZE " +
                     std::to_string(d.world_size) + "); run it as one process (WORLD_SIZE=1)");
  }
}

// --init as a path that does not depend on how it was spelt ("enc", "./enc"); a scheme such as
// "hf:" is kept in front.
std::string canonical_init(const std::string& init) {
  if (init.empty()) return init;
  const std::size_t colon = init.find(':');
  const std::string scheme = colon != std::string::npos && !fs::exists(init) ? init.substr(0, colon + 1) : "";
  std::error_code error;
  const fs::path path = fs::weakly_canonical(init.substr(scheme.size()), error);
  return error ? init : scheme + path.string();
}

// The manifest's sha256 of an --init bundle (which names its payloads' sums): re-pretrained
// at the same path it is another encoder. Empty for anything else.
std::string init_sha256(const std::string& init) {
  const std::string manifest = manifest_path(init);
  return !init.empty() && fs::is_regular_file(manifest) ? sha256_file_hex(manifest) : "";
}

// What a training was started with, as far as its checkpoints depend on it.
nlohmann::json training_settings(const TrainRequest& request, const Classifier& model, const std::string& data_sha256) {
  return {{"family", model.family()},
          {"config", model.config()},
          {"seed", request.seed},
          {"data_sha256", data_sha256},
          {"init", canonical_init(request.init_dir)},
          {"init_sha256", init_sha256(request.init_dir)},
          {"world_size", request.distributed.world_size}};
}

// The settings every rank must share, whatever its paths: no folder names, no world size.
SettingsFingerprint rank_fingerprint(nlohmann::json settings, const std::vector<std::string>& execution_keys) {
  for (const std::string& key : execution_keys) settings["config"].erase(key);
  settings.erase("init");
  settings.erase("world_size");
  return fingerprint_parts(settings);
}

// Whether training continues the work folder's checkpoints: only those made with the same
// settings. Rank 0 alone writes the folder, which the ranks may share; the others only check it,
// so that all of them refuse a changed resume at once.
bool continue_work(const TrainRequest& request, const nlohmann::json& settings, const std::string& out_dir) {
  const Family& family = find_family(request.family);
  if (!family.resumes()) return false;
  const std::string work_dir = work_dir_for(out_dir);
  if (request.distributed.rank != 0) {
    if (request.resume) check_work_folder(work_dir, settings, family.execution_keys());
    return request.resume;
  }
  return prepare_work_folder(work_dir, settings, request.resume,
                             request.restart_changed_work ? ChangedWork::kStartOver : ChangedWork::kRefuse,
                             family.execution_keys());
}

// --exclude or --relabel: the training titles edited as the audit file says (a dev set drawn
// from the same file is checked, not edited), the data's fingerprint with the audit's. Null
// facts when there is none.
nlohmann::json edit_by_audit(const TrainRequest& request, Splits& splits) {
  if (!request.exclude_file.empty() && !request.relabel_file.empty()) {
    throw UsageError("--exclude and --relabel: give one of them (an audit's titles are either left out or relabelled)");
  }
  const AuditEdits edits = request.exclude_file.empty() ? AuditEdits{request.relabel_file, AuditUse::kRelabel}
                                                        : AuditEdits{request.exclude_file, AuditUse::kExclude};
  if (edits.path.empty()) return nullptr;
  const Dataset* drawn_dev = request.files.given() && request.files.dev.empty() ? &splits.dev : nullptr;
  nlohmann::json facts = apply_audit(edits, splits.labels, splits.train, drawn_dev);
  splits.data_sha256 = audited_fingerprint(splits.data_sha256, facts);
  return facts;
}

}  // namespace

std::string work_dir_for(const std::string& out_dir) { return out_dir + ".work"; }

nlohmann::json build_config(const std::string& family, const std::string& config_file,
                            const std::vector<std::string>& overrides) {
  nlohmann::json config = strip_docs(default_config(family));
  // Held while merging only so that an unknown key's error lists it among the known keys; it
  // is the workflow's (calibrate_setting reads it), not the family's.
  config[kCalibrateKey] = true;
  if (!config_file.empty()) {
    nlohmann::json file = read_config_file(config_file);
    file.erase(kCalibrateKey);  // workflow-level, as in --set: calibrate_setting reads it
    merge_config(config, file, config_file);
  }
  for (const std::string& assignment : overrides) {
    if (!is_workflow_override(assignment)) apply_override(config, assignment);
  }
  config.erase(kCalibrateKey);
  return config;
}

TrainOutcome train_model(const TrainRequest& request) {
  check_family_options(request);
  check_distributed(request);
  // "x/" as "x": its work folder is x.work beside it, not x/.work inside the bundle's folder.
  // Through a link (runs/latest), the bundle it names is replaced, and its work folder is beside that one.
  const std::string out_dir =
      link_target(without_trailing_slashes(request.out_dir.empty() ? "runs/" + request.family : request.out_dir));
  if (request.distributed.rank == 0) BundleWriter::check_target(out_dir);
  const CalibrateSetting calibrate = calibrate_setting(request.config_file, request.overrides);
  refuse_calibrate_setting(request.family, calibrate);
  auto model = make_classifier(request.family);
  const nlohmann::json requested =
      request.config.is_null() ? build_config(request.family, request.config_file, request.overrides) : request.config;
  model->configure(requested);
  model->check_trainable(request.init_dir);
  Splits splits = read_training_data(request.data_dir, request.files, request.seed, request.skip_bad_lines);
  const nlohmann::json audit = edit_by_audit(request, splits);
  const int threads = given_thread_count(request.threads);
  const std::string& data_sha256 = splits.data_sha256;
  const nlohmann::json settings = training_settings(request, *model, data_sha256);
  TrainContext ctx = context_for(request, splits, out_dir, threads, continue_work(request, settings, out_dir));
  ctx.settings_fingerprint = rank_fingerprint(settings, find_family(request.family).execution_keys());
  std::optional<FeedTraining> feed;
  if (!request.unlabeled.empty()) {
    feed.emplace(open_feed_training(request, splits, model->config(), out_dir, threads));
    ctx.unlabeled = &feed->feed.titles;
    if (!feed->init_dir().empty()) ctx.init_dir = feed->init_dir();
  }
  nlohmann::json facts = timed_train(*model, ctx);
  if (!audit.is_null()) facts["audit"] = audit;
  if (request.distributed.rank != 0) {  // rank 0 evaluates and writes the bundle
    spdlog::info("rank {} done; rank 0 writes the bundle {}", request.distributed.rank, out_dir);
    TrainOutcome outcome{out_dir, {}, {{"training", facts}}};
    outcome.wrote_bundle = false;
    return outcome;
  }
  facts[kCalibrateKey] = to_string(calibrate);  // pipeline --resume compares it: it is not in the config
  // A family may store other values than were asked (autotune's choice, a path made absolute):
  // pipeline --resume compares what was asked.
  if (model->config() != requested) facts[kRequestedConfigKey] = requested;
  if (request.extra_facts.is_object()) facts.update(request.extra_facts);
  model = calibrated_on_dev(std::move(model), calibrate, splits, request.seed, facts);
  spdlog::info("trained in {:.1f} s", facts["train_seconds"].get<double>());
  TrainedModel trained{std::move(model), std::move(facts), request.family, out_dir, data_sha256, request.seed};
  if (feed) trained = self_trained(std::move(trained), request, splits, ctx, *feed, calibrate);
  return write_trained_bundle(std::move(trained), splits);
}

nlohmann::json timed_train(Classifier& model, const TrainContext& ctx) {
  spdlog::info("training {} with {} threads, seed {}", model.family(), ctx.threads, ctx.seed);
  // ctx.threads is training's one thread count; the predictions a family makes while it trains
  // (dev, a cascade's members) and after it use the same, set here and nowhere else.
  model.set_threads(ctx.threads);
  const Stopwatch watch;
  nlohmann::json facts = model.train(ctx);
  facts["train_seconds"] = watch.seconds() + facts.value(kResumedSecondsFact, 0.0);
  if (!facts.contains("threads")) facts["threads"] = ctx.threads;  // a family may cap what it uses
  facts["seed"] = ctx.seed;
  return facts;
}

// Fits the temperature on dev (the sample the model's eval_limit asks for) and wraps the model.
std::unique_ptr<Classifier> calibrated_on_dev(std::unique_ptr<Classifier> model, CalibrateSetting setting,
                                              const Splits& splits, std::uint64_t seed, nlohmann::json& facts) {
  if (!wants_calibration(setting, *model, facts)) return model;
  EvalOptions options;
  options.seed = seed;
  options.limit = model->eval_limit();
  options.progress_label = "dev";
  const EvalOutcome dev = evaluate_model(*model, splits.dev, splits.labels, options);
  Temperature t;
  const nlohmann::json fitted = fit_calibration_facts(dev, t);
  if (fitted.is_null()) return model;  // no probabilities to scale
  facts[kCalibrationFact] = fitted;
  auto calibrated = with_temperature(std::move(model), t);
  calibrated->reset_run_stats();  // the test metrics count the test evaluation's requests alone
  return calibrated;
}

TrainOutcome write_trained_bundle(TrainedModel trained, const Splits& splits) {
  Classifier& model = *trained.model;
  spdlog::info("evaluating on {}", splits.test.path);
  EvalOptions eval_options;
  eval_options.seed = trained.seed;
  eval_options.limit = model.eval_limit();
  eval_options.progress_label = splits.test_split;
  const EvalOutcome eval = evaluate_model(model, splits.test, splits.labels, eval_options);

  BundleWriter writer(trained.out_dir);
  model.save(writer);
  nlohmann::json metrics = eval_report_json(eval, model, splits.test.path);
  metrics["split"] = splits.test_split;
  metrics["training"] = trained.facts;
  metrics["skipped_lines"] = skipped_lines(splits);
  metrics["calibrated"] = calibrated_by_facts(trained.facts);
  name_stages(metrics, trained.facts);
  write_eval_files(writer.file_path(kMetricsFile), eval, metrics, splits.test, splits.labels,
                   figure_caption(trained.out_dir, trained.family, splits.test.path));
  writer.commit(manifest_for(model, splits, trained.facts, eval.metrics, trained.data_sha256));
  spdlog::info("wrote bundle {}", trained.out_dir);
  TrainOutcome outcome{trained.out_dir, eval.metrics, metrics};
  outcome.test_split = splits.test_split;
  return outcome;
}

}  // namespace newscls
