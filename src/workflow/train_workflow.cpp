#include <spdlog/spdlog.h>

#include "newscls/atomic_file.h"
#include "newscls/error.h"
#include "newscls/stopwatch.h"
#include "newscls/workflow.h"

namespace newscls {
namespace {

struct Splits {
  DataLayout layout;
  LabelSet labels;
  Dataset train, dev, test;
};

Splits read_splits(const std::string& data_dir, bool skip_bad_lines) {
  Splits s;
  s.layout = resolve_data_dir(data_dir);
  s.labels = read_class_file(s.layout.classes());
  const ReadOptions options{skip_bad_lines};
  s.train = read_labeled_file(s.layout.train(), s.labels.size(), options);
  s.dev = read_labeled_file(s.layout.dev(), s.labels.size(), options);
  s.test = read_labeled_file(s.layout.test(), s.labels.size(), options);
  spdlog::info("data {}: train {} dev {} test {} titles, {} classes", s.layout.dir, s.train.size(), s.dev.size(),
               s.test.size(), s.labels.size());
  return s;
}

nlohmann::json skipped_lines(const Splits& s) {
  return {{"train", s.train.skipped_lines}, {"dev", s.dev.skipped_lines}, {"test", s.test.skipped_lines}};
}

}  // namespace

namespace {

TrainContext context_for(const TrainRequest& request, const Splits& splits, const std::string& out_dir, int threads) {
  TrainContext ctx;
  ctx.train = &splits.train;
  ctx.dev = &splits.dev;
  ctx.labels = &splits.labels;
  ctx.seed = request.seed;
  ctx.threads = threads;
  ctx.work_dir = out_dir + ".work";
  ctx.resume = request.resume;
  ctx.init_dir = request.init_dir;
  ctx.device = request.device;
  return ctx;
}

nlohmann::json timed_train(Classifier& model, const TrainContext& ctx) {
  spdlog::info("training {} with {} threads, seed {}", model.family(), ctx.threads, ctx.seed);
  const Stopwatch watch;
  nlohmann::json facts = model.train(ctx);
  facts["train_seconds"] = watch.seconds();
  if (!facts.contains("threads")) facts["threads"] = ctx.threads;  // a family may cap what it uses
  facts["seed"] = ctx.seed;
  return facts;
}

Manifest manifest_for(const Classifier& model, const Splits& splits, const nlohmann::json& facts,
                      const Metrics& test) {
  Manifest manifest;
  manifest.family = model.family();
  manifest.labels = splits.labels.names;
  manifest.config = model.config();
  manifest.training = facts;
  manifest.training["test_accuracy"] = test.accuracy;
  manifest.training["test_macro_f1"] = test.macro_f1;
  manifest.training["data"] = splits.layout.dir;
  return manifest;
}

}  // namespace

TrainOutcome train_model(const TrainRequest& request) {
  const std::string out_dir = request.out_dir.empty() ? "runs/" + request.family : request.out_dir;
  auto model = make_classifier(request.family);
  model->configure(build_config(request.family, request.config_file, request.overrides));
  const Splits splits = read_splits(request.data_dir, request.skip_bad_lines);
  const int threads = request.threads > 0 ? request.threads : default_thread_count();
  model->set_threads(threads);
  const nlohmann::json facts = timed_train(*model, context_for(request, splits, out_dir, threads));
  spdlog::info("trained in {:.1f} s; evaluating on {}", facts["train_seconds"].get<double>(), splits.test.path);

  EvalOptions eval_options;
  eval_options.seed = request.seed;
  eval_options.limit = model->eval_limit();
  eval_options.progress_label = "test";
  const EvalOutcome eval = evaluate_model(*model, splits.test, splits.labels, eval_options);

  BundleWriter writer(out_dir);
  model->save(writer);
  nlohmann::json metrics = eval_report_json(eval, *model, splits.test.path);
  metrics["split"] = "test";
  metrics["training"] = facts;
  metrics["skipped_lines"] = skipped_lines(splits);
  write_eval_files(writer.file_path("metrics.json"), eval, metrics, splits.test, splits.labels, request.family + " on test");
  writer.commit(manifest_for(*model, splits, facts, eval.metrics));
  spdlog::info("wrote bundle {}", out_dir);
  return {out_dir, eval.metrics, metrics};
}

}  // namespace newscls
