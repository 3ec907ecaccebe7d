// The self-training rounds and `train --unlabeled` (newscls/workflow/adapt_workflow.h says what and why).
#include "workflow/self_training.h"

#include <filesystem>
#include <utility>

#include <spdlog/spdlog.h>

#include "newscls/core/error.h"
#include "newscls/core/interrupt.h"
#include "newscls/core/stopwatch.h"
#include "newscls/workflow/registry.h"
#include "workflow/pseudo_labels.h"
#include "workflow/self_training_rounds.h"

namespace fs = std::filesystem;

namespace newscls {

nlohmann::json SelfTraining::to_json() const {
  return {{"rounds", rounds},
          {"min_confidence", min_confidence},
          {"share_tolerance", share_tolerance},
          {"stable_change", stable_change},
          {"pseudo_copies", pseudo_copies},
          {"max_feed_titles", max_feed_titles},
          {"pretrain", pretrain}};
}

void SelfTraining::check() const {
  auto refuse = [](const std::string& option, const std::string& why) { throw UsageError(option + ": " + why); };
  if (rounds != kFamilyRounds && (rounds < 0 || rounds > 20)) refuse("--rounds", "must be 0..20");
  if (!(min_confidence >= 0 && min_confidence <= 1)) refuse("--min-confidence", "must be 0..1");
  if (!(share_tolerance >= 1)) refuse("--share-tolerance", "must be at least 1 (1: exactly the labelled shares)");
  if (!(stable_change >= 0 && stable_change <= 1)) refuse("--stable-change", "must be 0..1");
  if (max_feed_titles == 0) refuse("--max-feed-titles", "must be at least 1");
  if (pseudo_copies < 1 || pseudo_copies > 100) refuse("--pseudo-copies", "must be 1..100");
}

SelfTraining SelfTraining::for_family(const std::string& family) const {
  SelfTraining resolved = *this;
  if (rounds == kFamilyRounds) resolved.rounds = find_family(family).default_self_training_rounds();
  return resolved;
}

std::vector<Prediction> predict_feed(Classifier& model, const std::vector<std::string>& feed) {
  std::vector<Prediction> out;
  out.reserve(feed.size());
  const std::size_t batch = std::max<std::size_t>(1, model.preferred_batch_size());
  for (std::size_t start = 0; start < feed.size(); start += batch) {
    check_interrupted();
    const std::vector<std::string> titles(
        feed.begin() + static_cast<std::ptrdiff_t>(start),
        feed.begin() + static_cast<std::ptrdiff_t>(std::min(feed.size(), start + batch)));
    for (Prediction& p : predict_titles(model, titles)) out.push_back(std::move(p));
  }
  return out;
}

std::vector<std::vector<Prediction>> teacher_votes(const std::vector<std::string>& teacher_dirs,
                                                   const std::vector<std::string>& labels,
                                                   const std::vector<std::string>& feed, int threads) {
  std::vector<std::vector<Prediction>> votes;
  for (const std::string& dir : teacher_dirs) {
    const Bundle bundle = Bundle::open(dir);
    if (bundle.manifest().labels != labels) {
      throw UsageError("--teacher " + dir + ": its classes differ from the model's; a teacher must share them");
    }
    auto teacher = load_classifier(bundle);
    teacher->set_threads(threads);
    spdlog::info("teacher {} ({}) labels the feed", dir, bundle.manifest().family);
    votes.push_back(predict_feed(*teacher, feed));
  }
  return votes;
}

namespace {

Dataset with_pseudo_labels(const Dataset& train, const std::vector<std::string>& feed, const PseudoLabels& kept,
                           int copies) {
  Dataset merged;
  merged.path = train.path;
  merged.titles = train.titles;
  merged.labels = train.labels;
  for (int copy = 0; copy < copies; ++copy) {
    for (std::size_t k = 0; k < kept.rows.size(); ++k) {
      merged.titles.push_back(feed[kept.rows[k]]);
      merged.labels.push_back(kept.labels[k]);
    }
  }
  return merged;
}

}  // namespace

TrainedModel RoundTrainer::operator()(const Dataset& train) const {
  auto model = make_classifier(family);
  model->configure(config);
  TrainContext ctx = context;
  ctx.train = &train;
  nlohmann::json facts = timed_train(*model, ctx);
  TrainedModel trained;
  trained.model = calibrated_on_dev(std::move(model), calibrate, *splits, context.seed, facts);
  trained.facts = std::move(facts);
  return trained;
}

nlohmann::json run_rounds(TrainedModel& current, const RoundTrainer& train_round, const std::vector<std::string>& feed,
                          const std::vector<std::string>& teacher_dirs, const SelfTraining& settings) {
  nlohmann::json rounds = nlohmann::json::array();
  if (settings.rounds == 0) return rounds;
  const Splits& splits = *train_round.splits;
  const auto teachers = teacher_votes(teacher_dirs, splits.labels.names, feed, train_round.context.threads);
  const std::vector<double> shares = class_shares(splits.train.labels, splits.labels.size());
  const PseudoLabelRule rule{settings.min_confidence, settings.share_tolerance};
  PseudoLabels previous;
  for (int round = 1; round <= settings.rounds; ++round) {
    std::vector<std::vector<Prediction>> votes = {predict_feed(*current.model, feed)};
    votes.insert(votes.end(), teachers.begin(), teachers.end());
    const PseudoLabels kept = select_pseudo_labels(votes, shares, rule);
    nlohmann::json facts = kept.facts();
    facts["round"] = round;
    const double change = round > 1 ? pseudo_label_change(previous, kept) : 1.0;
    if (round > 1) facts["changed"] = change;
    spdlog::info("self-training round {}: {} of {} feed titles kept ({} confident and agreed{})", round,
                 kept.rows.size(), feed.size(), kept.candidates,
                 round > 1 ? fmt::format("; {:.1f}% changed", 100 * change) : std::string());
    if (kept.rows.empty() || change < settings.stable_change) {
      facts["stopped"] = kept.rows.empty() ? "no feed title kept" : "stable";
      rounds.push_back(facts);
      break;
    }
    TrainedModel next = train_round(with_pseudo_labels(splits.train, feed, kept, settings.pseudo_copies));
    if (next.facts.contains(kCalibrationFact)) facts["dev_accuracy"] = next.facts[kCalibrationFact]["dev_accuracy"];
    rounds.push_back(facts);
    current.model = std::move(next.model);
    current.facts.update(next.facts);
    previous = kept;
  }
  return rounds;
}

Feed read_training_feed(const std::string& path, const SelfTraining& settings, std::uint64_t seed,
                        bool skip_bad_lines) {
  Feed feed = read_feed(path, {settings.max_feed_titles, seed, skip_bad_lines});
  spdlog::info("feed {}: {} lines, {} distinct titles used", feed.path, feed.lines, feed.titles.size());
  return feed;
}

void pretrain_on_feed(FeedTraining& feed, const Family& family, const nlohmann::json& config, const Splits& splits,
                      const std::string& out_dir, const std::string& continue_from, std::uint64_t seed, int threads) {
  const fs::path parent = fs::absolute(out_dir).parent_path();
  feed.encoder_folder = std::make_unique<StagingFolder>(parent.string(), ".adapt-encoder");
  PretrainContext pretrain;
  pretrain.config = config;
  pretrain.train = &splits.train;
  pretrain.labels = &splits.labels;
  pretrain.unlabeled = &feed.feed.titles;
  pretrain.continue_from = continue_from;
  pretrain.seed = seed;
  pretrain.threads = threads;
  pretrain.out_dir = feed.init_dir();
  spdlog::info(continue_from.empty() ? "pretraining the encoder on the training titles and the feed"
                                     : "continuing the encoder's pretraining on the feed");
  feed.pretrain_facts = family.pretrain(pretrain);
}

FeedTraining open_feed_training(const TrainRequest& request, const Splits& splits, const nlohmann::json& config,
                                const std::string& out_dir, int threads) {
  if (request.resume) throw UsageError("--unlabeled: not with --resume (self-training keeps no checkpoints)");
  if (request.distributed.enabled()) throw UsageError("--unlabeled: not in a distributed run (WORLD_SIZE > 1)");
  request.self_training.check();
  FeedTraining out;
  out.feed = read_training_feed(request.unlabeled, request.self_training, request.seed, request.skip_bad_lines);
  const Family& family = find_family(request.family);
  if (family.pretrains() && request.init_dir.empty() && request.self_training.pretrain) {
    pretrain_on_feed(out, family, config, splits, out_dir, "", request.seed, threads);
  }
  return out;
}

TrainedModel self_trained(TrainedModel trained, const TrainRequest& request, const Splits& splits,
                          const TrainContext& ctx, const FeedTraining& feed, CalibrateSetting calibrate) {
  const Stopwatch watch;
  const RoundTrainer train_round{request.family, trained.model->config(), ctx, calibrate, &splits};
  const SelfTraining settings = request.self_training.for_family(request.family);
  nlohmann::json rounds = run_rounds(trained, train_round, feed.feed.titles, request.teacher_dirs, settings);
  if (feed.encoder_folder) trained.facts.erase("init_dir");  // a staging folder, gone: "pretraining" says what it was
  trained.facts["adaptation"] = adaptation_facts(feed, settings, request.teacher_dirs, rounds);
  trained.facts["adaptation"]["self_training_seconds"] = watch.seconds();
  return trained;
}

nlohmann::json adaptation_facts(const FeedTraining& feed, const SelfTraining& settings,
                                const std::vector<std::string>& teachers, const nlohmann::json& rounds) {
  std::string method = "feed vocabulary";
  if (!feed.pretrain_facts.is_null()) method += " + domain-adaptive pretraining";
  if (settings.rounds > 0) method += teachers.empty() ? " + self-training" : " + co-training";
  nlohmann::json facts = {{"method", method},
                          {"feed", feed.feed.facts()},
                          {"settings", settings.to_json()},
                          {"teachers", teachers},
                          {"rounds", rounds}};
  if (!feed.pretrain_facts.is_null()) facts["pretraining"] = feed.pretrain_facts;
  return facts;
}

}  // namespace newscls
