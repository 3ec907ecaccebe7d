#include "newscls/workflow/compress_workflow.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include <spdlog/spdlog.h>

#include "newscls/core/atomic_file.h"
#include "newscls/core/bundle.h"
#include "newscls/core/error.h"
#include "newscls/core/interrupt.h"
#include "newscls/core/parallel.h"
#include "newscls/core/stopwatch.h"
#include "newscls/workflow/eval_workflow.h"
#include "newscls/workflow/registry.h"
#include "workflow/splits.h"
#include "workflow/staging_folder.h"

namespace newscls {
namespace fs = std::filesystem;

namespace {

using ProbRows = std::vector<std::vector<float>>;

// A row stays empty where the teacher gave no probabilities (an LLM's unparsable reply). A
// teacher that gives none in its first batch is refused there, before it costs more (an LLM's
// requests are paid).
ProbRows one_teacher_probabilities(const std::string& dir, const std::vector<std::string>& titles, int threads) {
  ProbRows rows(titles.size());
  auto model = load_classifier(dir);
  model->set_threads(threads);
  const std::size_t batch = std::max<std::size_t>(1, model->preferred_batch_size());
  std::size_t answered = 0;
  for (std::size_t begin = 0; begin < titles.size(); begin += batch) {
    const std::size_t end = std::min(titles.size(), begin + batch);
    const std::vector<std::string> part(titles.begin() + begin, titles.begin() + end);
    const std::vector<Prediction> predicted = model->predict_batch(part);
    for (std::size_t i = 0; i < predicted.size(); ++i) {
      answered += !predicted[i].probs.empty();
      rows[begin + i] = predicted[i].probs;
    }
    if (answered == 0) throw UsageError("teacher " + dir + " gives no probabilities to learn from");
  }
  return rows;
}

// Every weight vector on the simplex grid of step 1/parts, in a fixed order.
void simplex_grid(std::size_t n, int parts, std::vector<int>& prefix, std::vector<std::vector<double>>& out) {
  if (prefix.size() + 1 == n) {
    int used = 0;
    for (int p : prefix) used += p;
    std::vector<double> w;
    for (int p : prefix) w.push_back(static_cast<double>(p) / parts);
    w.push_back(static_cast<double>(parts - used) / parts);
    out.push_back(w);
    return;
  }
  int used = 0;
  for (int p : prefix) used += p;
  for (int p = 0; p <= parts - used; ++p) {
    prefix.push_back(p);
    simplex_grid(n, parts, prefix, out);
    prefix.pop_back();
  }
}

double weighted_accuracy(const std::vector<ProbRows>& probs, const std::vector<double>& w,
                         const std::vector<int>& gold) {
  std::size_t correct = 0;
  for (std::size_t i = 0; i < gold.size(); ++i) {
    std::vector<double> row(probs[0][i].size(), 0.0);
    for (std::size_t t = 0; t < probs.size(); ++t) {
      for (std::size_t c = 0; c < row.size(); ++c) row[c] += w[t] * probs[t][i][c];
    }
    correct += static_cast<int>(std::max_element(row.begin(), row.end()) - row.begin()) == gold[i];
  }
  return gold.empty() ? 0.0 : static_cast<double>(correct) / static_cast<double>(gold.size());
}

}  // namespace

std::vector<std::vector<float>> teacher_probabilities(const std::vector<std::string>& teacher_dirs,
                                                      const std::vector<std::string>& titles, int threads,
                                                      const std::vector<double>& weights) {
  // Per title, the weighted mean of the teachers that answered it; uniform where none did.
  std::vector<std::vector<float>> mean(titles.size());
  std::vector<double> weight_seen(titles.size(), 0.0);
  std::size_t classes = 0;
  for (std::size_t t = 0; t < teacher_dirs.size(); ++t) {
    const double w = weights.empty() ? 1.0 / static_cast<double>(teacher_dirs.size()) : weights.at(t);
    const ProbRows rows = one_teacher_probabilities(teacher_dirs[t], titles, threads);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (rows[i].empty()) continue;
      if (classes == 0) classes = rows[i].size();
      if (rows[i].size() != classes) throw UsageError("teacher " + teacher_dirs[t] + " has another number of classes");
      std::vector<float>& row = mean[i];
      if (row.empty()) row.assign(classes, 0.0f);
      for (std::size_t c = 0; c < classes; ++c) row[c] += static_cast<float>(w * rows[i][c]);
      weight_seen[i] += w;
    }
  }
  std::size_t unanswered = 0;
  for (std::size_t i = 0; i < mean.size(); ++i) {
    if (mean[i].empty()) {
      ++unanswered;
      mean[i].assign(classes, 1.0f / static_cast<float>(classes));
    } else if (weight_seen[i] > 0) {
      for (float& p : mean[i]) p = static_cast<float>(p / weight_seen[i]);
    }
  }
  if (unanswered > 0)
    spdlog::warn("distill: no teacher gave probabilities for {} of {} titles; they learn a uniform row", unanswered,
                 titles.size());
  return mean;
}

std::vector<double> choose_teacher_weights(const std::vector<std::vector<std::vector<float>>>& probs,
                                           const std::vector<int>& gold, int parts) {
  std::vector<std::vector<double>> grid;
  std::vector<int> prefix;
  simplex_grid(probs.size(), parts, prefix, grid);
  const std::vector<double> equal(probs.size(), 1.0 / static_cast<double>(probs.size()));
  std::vector<double> best = equal;
  double best_acc = weighted_accuracy(probs, equal, gold);
  for (const std::vector<double>& w : grid) {
    const double acc = weighted_accuracy(probs, w, gold);
    if (acc > best_acc) {  // ties keep the earlier (equal weights first)
      best_acc = acc;
      best = w;
    }
  }
  return best;
}

namespace {

Splits read_splits_for(const CompressRequest& o, const Bundle& bundle) {
  Splits s = read_splits(o.data_dir, o.skip_bad_lines);
  if (s.labels.names != bundle.manifest().labels) {
    throw DataError(s.layout.classes(), 0, "class list differs from the labels of " + o.model_dir);
  }
  return s;
}

std::vector<std::string> read_titles(const std::string& path) {
  std::vector<std::string> titles;
  if (path.empty()) return titles;
  TitleReader reader(path);
  for (std::string title; reader.next(title);) {
    if (!title.empty()) titles.push_back(title);
  }
  return titles;
}

double payload_megabytes(const Bundle& bundle) {
  std::uintmax_t bytes = 0;
  for (const auto& [name, sha] : bundle.manifest().payloads) bytes += fs::file_size(bundle.payload_path(name));
  return static_cast<double>(bytes) / 1e6;
}

nlohmann::json accuracy_json(const std::string& dir, const Splits& s, int threads) {
  auto model = load_classifier(dir);
  model->set_threads(threads);
  nlohmann::json j;
  for (const auto& [name, data] : {std::pair<const char*, const Dataset*>{"dev", &s.dev}, {"test", &s.test}}) {
    EvalOptions options;
    options.progress_label = std::string("compress: ") + name;
    const Metrics m = evaluate_model(*model, *data, s.labels, options).metrics;
    j[name] = {{"accuracy", m.accuracy}, {"macro_f1", m.macro_f1}};
  }
  return j;
}

// Seconds of each bundle's prediction loop over the titles, in predict's batches; the bundles
// are loaded (and their checksums verified) before any clock starts, since that cost grows with
// the bundle's size, not with the titles. Alternated round by round, so load drifts hit both
// alike; the best of `rounds`.
std::vector<double> predict_seconds(const std::vector<std::string>& dirs, const std::vector<std::string>& titles,
                                    int rounds, int threads) {
  std::vector<std::unique_ptr<Classifier>> models;
  std::vector<std::vector<std::vector<std::string>>> batches(dirs.size());
  for (std::size_t b = 0; b < dirs.size(); ++b) {
    models.push_back(load_classifier(dirs[b]));
    models.back()->set_threads(threads);
    const std::size_t size = std::max<std::size_t>(1, models.back()->preferred_batch_size());
    for (std::size_t begin = 0; begin < titles.size(); begin += size) {
      batches[b].emplace_back(titles.begin() + static_cast<std::ptrdiff_t>(begin),
                              titles.begin() + static_cast<std::ptrdiff_t>(std::min(titles.size(), begin + size)));
    }
  }
  std::vector<double> best(dirs.size(), 0.0);
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t b = 0; b < dirs.size(); ++b) {
      const Stopwatch watch;
      for (const std::vector<std::string>& batch : batches[b]) {
        check_interrupted();
        predict_titles(*models[b], batch);
      }
      const double s = watch.seconds();
      if (round == 0 || s < best[b]) best[b] = s;
    }
  }
  return best;
}

nlohmann::json side_json(const std::string& dir, nlohmann::json accuracies, std::int64_t parameters) {
  const Bundle bundle = Bundle::open(dir);
  nlohmann::json j = std::move(accuracies);
  j["bundle"] = dir;
  j["bundle_mb"] = payload_megabytes(bundle);
  if (parameters > 0) j["parameters"] = parameters;
  return j;
}

// The manifest's test figures, which info and serve show, are the new model's: a compressed
// bundle's manifest starts from its source's training facts, or from none. They are dropped
// before the test evaluation, whose metrics.json copies the manifest's training facts.
void record_test_figures(const std::string& dir, const Metrics* test) {
  Manifest manifest = Bundle::read_manifest(dir);
  if (manifest.training.is_object()) {
    manifest.training.erase("test_accuracy");
    manifest.training.erase("test_macro_f1");
  }
  if (test != nullptr) {
    manifest.training["test_accuracy"] = test->accuracy;
    manifest.training["test_macro_f1"] = test->macro_f1;
  }
  write_json_atomic(manifest_path(dir), manifest_to_json(manifest));
}

// Returns the new bundle's dev and test accuracy and macro-F1 from these evaluations.
nlohmann::json calibrate_and_evaluate(const CompressRequest& o, int threads) {
  EvalRequest dev;
  dev.model_dir = o.out_dir;
  dev.data_dir = o.data_dir;
  dev.split = "dev";
  dev.fit_calibration = true;
  dev.threads = threads;
  dev.skip_bad_lines = o.skip_bad_lines;  // as the splits were read for the compression itself
  dev.out = o.out_dir + "/dev/metrics.json";
  const Metrics on_dev = run_eval(dev).metrics;
  EvalRequest test = dev;
  test.split = "test";
  test.fit_calibration = false;
  test.out.clear();  // the bundle's own metrics.json, as train writes
  record_test_figures(o.out_dir, nullptr);
  const Metrics on_test = run_eval(test).metrics;
  record_test_figures(o.out_dir, &on_test);
  return {{"dev", {{"accuracy", on_dev.accuracy}, {"macro_f1", on_dev.macro_f1}}},
          {"test", {{"accuracy", on_test.accuracy}, {"macro_f1", on_test.macro_f1}}}};
}

// Weights of the teachers' average as the family reads the method's settings: equal, given,
// or chosen here (the simplex grid point of step 0.05 with the best dev accuracy), as only the
// workflow loads the teachers. Facts about the choice go to `facts`.
std::vector<double> teacher_weights(const Family& family, const CompressRequest& o,
                                    const std::vector<std::string>& teachers, const Splits& s, int threads,
                                    nlohmann::json& facts) {
  const TeacherWeighting weighting = family.teacher_weighting(o.method, o.overrides, teachers.size());
  facts = {{"dirs", teachers}, {"teacher_weights", weighting.setting}};
  if (!weighting.choose_on_dev || teachers.size() == 1) return weighting.weights;
  std::vector<std::vector<std::vector<float>>> dev;
  for (const std::string& dir : teachers) dev.push_back(one_teacher_probabilities(dir, s.dev.titles, threads));
  const std::vector<double> w = choose_teacher_weights(dev, s.dev.labels, 20);
  const std::vector<double> equal(teachers.size(), 1.0 / static_cast<double>(teachers.size()));
  facts["weights"] = w;
  facts["dev_accuracy_chosen"] = weighted_accuracy(dev, w, s.dev.labels);
  facts["dev_accuracy_equal"] = weighted_accuracy(dev, equal, s.dev.labels);
  spdlog::info("teacher weights chosen on dev: {} (dev accuracy {:.4f}, equal weights {:.4f})",
               nlohmann::json(w).dump(), facts["dev_accuracy_chosen"].get<double>(),
               facts["dev_accuracy_equal"].get<double>());
  return w;
}

CompressContext request_for(const CompressRequest& o, const Family& family, const Splits& s, int threads,
                            const std::vector<std::string>& unlabelled, nlohmann::json& teacher_facts) {
  CompressContext r;
  r.method = o.method;
  r.model_dir = o.model_dir;
  r.overrides = o.overrides;
  r.train = &s.train;
  r.dev = &s.dev;
  r.labels = &s.labels;
  r.unlabelled = unlabelled;
  r.seed = o.seed;
  r.threads = threads;
  r.out_dir = o.out_dir;
  if (!family.compress_method_takes_teachers(o.method)) return r;
  const std::vector<std::string> teachers =
      o.teacher_dirs.empty() ? std::vector<std::string>{o.model_dir} : o.teacher_dirs;
  const std::vector<double> weights = teacher_weights(family, o, teachers, s, threads, teacher_facts);
  r.teacher_probs = [teachers, threads, weights](const std::vector<std::string>& titles) {
    return teacher_probabilities(teachers, titles, threads, weights);
  };
  return r;
}

// "runs/q8/" and "runs/./q8" as "runs/q8".
fs::path folder_path(const std::string& dir) {
  fs::path p = fs::path(dir).lexically_normal();
  return p.filename().empty() ? p.parent_path() : p;
}

// Writes the compressed bundle at o.out_dir, calibrates it on dev, and measures it against its
// source: accuracy, size and prediction speed.
nlohmann::json compress_and_report(const CompressRequest& o, const Family& family, const Splits& splits, int threads,
                                   const std::vector<std::string>& unlabelled) {
  const Stopwatch watch;
  nlohmann::json teachers;
  const nlohmann::json facts = family.compress(request_for(o, family, splits, threads, unlabelled, teachers));
  const double compress_seconds = watch.seconds();
  const nlohmann::json after_accuracies = calibrate_and_evaluate(o, threads);

  nlohmann::json report{{"method", o.method},
                        {"source", o.model_dir},
                        {"family", family.name()},
                        {"data", without_trailing_slashes(fs::absolute(splits.layout.dir).lexically_normal().string())},
                        {"seed", o.seed},
                        {"settings", facts.value("settings", nlohmann::json::object())},
                        {"compress_seconds", compress_seconds},
                        {"facts", facts}};
  if (!teachers.is_null()) report["teachers"] = teachers;
  report["before"] = side_json(o.model_dir, accuracy_json(o.model_dir, splits, threads),
                               facts.value("parameters_before", std::int64_t{0}));
  report["after"] = side_json(o.out_dir, after_accuracies, facts.value("parameters_after", std::int64_t{0}));
  const std::size_t n = o.speed_titles == 0 ? splits.dev.size() : std::min(o.speed_titles, splits.dev.size());
  const std::vector<std::string> titles(splits.dev.titles.begin(),
                                        splits.dev.titles.begin() + static_cast<std::ptrdiff_t>(n));
  const std::vector<double> seconds = predict_seconds({o.model_dir, o.out_dir}, titles, o.speed_rounds, threads);
  report["before"]["predict_titles_per_s"] = n / std::max(seconds[0], 1e-9);
  report["after"]["predict_titles_per_s"] = n / std::max(seconds[1], 1e-9);
  report["speed"] = {
      {"titles", n},
      {"rounds", o.speed_rounds},
      {"threads", threads},
      {"speedup", seconds[0] / std::max(seconds[1], 1e-9)},
      {"note", "the prediction loop in predict's batches, both bundles loaded beforehand, best of the rounds"}};
  report["size_ratio"] =
      report["before"]["bundle_mb"].get<double>() / std::max(report["after"]["bundle_mb"].get<double>(), 1e-9);
  return report;
}

// The compress methods of every family that learn from teachers: "distill".
std::string teacher_methods() {
  std::set<std::string> methods;
  for (const std::string& name : known_families()) {
    const Family& family = find_family(name);
    for (const std::string& m : family.compress_methods()) {
      if (family.compress_method_takes_teachers(m)) methods.insert(m);
    }
  }
  std::string names;
  for (const std::string& m : methods) names += (names.empty() ? "" : " or ") + m;
  return names;
}

// --teacher and --unlabelled for a method that learns from no teacher would be ignored.
void refuse_teachers_unused(const CompressRequest& o, const Family& family) {
  if (family.compress_method_takes_teachers(o.method) || (o.teacher_dirs.empty() && o.unlabelled_file.empty())) return;
  throw UsageError(std::string(o.teacher_dirs.empty() ? "--unlabelled" : "--teacher") + " is for --method " +
                   teacher_methods() + " only (it would be ignored by " + o.method + ")");
}

}  // namespace

nlohmann::json run_compress(const CompressRequest& o) {
  if (o.out_dir.empty() || folders_overlap(o.out_dir, o.model_dir)) {
    throw UsageError(
        "compress needs an --out directory apart from --model-dir (not it, nor inside it, nor holding it)");
  }
  for (const std::string& teacher : o.teacher_dirs) {
    if (folders_overlap(o.out_dir, teacher))
      throw UsageError("--out " + o.out_dir + " would replace the teacher " + teacher);
  }
  const fs::path final_path = folder_path(o.out_dir);
  const std::string name = final_path.filename().string();
  if (name.empty() || name == "." || name == "..")
    throw UsageError("compress --out " + o.out_dir + ": name the bundle's folder");
  BundleWriter::check_target(o.out_dir);
  const Bundle source = Bundle::open(o.model_dir);
  refuse_teachers_unused(o, family_of_bundle(source));
  for (const std::string& teacher : o.teacher_dirs) {
    if (Bundle::open(teacher).manifest().labels != source.manifest().labels) {
      throw UsageError("teacher " + teacher + " was trained on other classes (or another order) than " + o.model_dir);
    }
  }
  const Family& family = family_of_bundle(source);
  const std::vector<std::string> methods = family.compress_methods();
  if (std::find(methods.begin(), methods.end(), o.method) == methods.end()) {
    std::string known;
    for (const std::string& m : methods) known += (known.empty() ? "" : ", ") + m;
    throw UsageError("model family '" + family.name() + "' has no compression method '" + o.method + "'" +
                     (known.empty() ? std::string(" (it has none)") : " (it has: " + known + ")"));
  }
  require_classes(source);
  const int threads = given_thread_count(o.threads);
  const Splits splits = read_splits_for(o, source);
  const std::vector<std::string> unlabelled = read_titles(o.unlabelled_file);
  spdlog::info("compressing {} by {} into {}", o.model_dir, o.method, o.out_dir);
  // The new bundle is built, calibrated, measured and reported on in a staging folder beside
  // --out, and moved over it only then: a run stopped or failing part way leaves no bundle that
  // looks finished (uncalibrated, its test figures missing), and the one at --out as it was.
  const StagingFolder staging(final_path.parent_path().string(), "." + name + ".compressing");
  CompressRequest staged = o;
  staged.out_dir = staging.path() + "/" + name;  // its own name: figures are captioned by it
  try {
    nlohmann::json report = compress_and_report(staged, family, splits, threads, unlabelled);
    report["after"]["bundle"] = o.out_dir;
    write_json_atomic(staged.out_dir + "/compression.json", report);
    sync_tree(staged.out_dir);
    check_interrupted();  // as BundleWriter::commit: a Ctrl-C until here keeps the bundle at --out
    replace_directory(staged.out_dir, final_path.string());
    sync_path(final_path.has_parent_path() ? final_path.parent_path().string() : ".");
    return report;
  } catch (...) {
    std::error_code ec;
    if (fs::exists(final_path, ec))
      spdlog::warn("compress stopped before its report: {} was left as it was", o.out_dir);
    throw;
  }
}

}  // namespace newscls
