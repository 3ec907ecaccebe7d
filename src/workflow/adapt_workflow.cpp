// `newscls adapt`: a trained bundle adapted to a reader's feed (newscls/workflow/adapt_workflow.h).
#include "newscls/workflow/adapt_workflow.h"

#include <algorithm>
#include <filesystem>
#include <string>
#include <unordered_set>
#include <vector>

#include <spdlog/spdlog.h>

#include "newscls/core/bundle.h"
#include "newscls/core/config.h"
#include "newscls/core/error.h"
#include "newscls/core/parallel.h"
#include "newscls/core/stopwatch.h"
#include "newscls/workflow/registry.h"
#include "workflow/answers_file.h"
#include "workflow/self_training.h"
#include "workflow/self_training_rounds.h"

namespace fs = std::filesystem;

namespace newscls {
namespace {

// The labelled data: the files or folder the request names, else the folder the bundle was
// trained on (a bundle trained from files names them again: their format options are not kept).
Splits labelled_data(const AdaptRequest& request, const Manifest& manifest) {
  if (request.files.given() || !request.data_dir.empty()) {
    return read_training_data(request.data_dir, request.files, request.seed, request.skip_bad_lines);
  }
  const nlohmann::json& facts = manifest.training;
  if (facts.is_object() && facts.contains("data_files")) {
    throw UsageError(request.model_dir + " was trained on labelled files: name them again (--train FILE ...)");
  }
  const bool has_folder = facts.is_object() && facts.value("data", nlohmann::json()).is_string();
  return read_splits(has_folder ? facts["data"].get<std::string>() : "", request.skip_bad_lines);
}

void check_paths(const AdaptRequest& request) {
  if (request.unlabeled.empty()) throw UsageError("--unlabeled: the feed's titles are needed");
  std::error_code error;
  if (fs::equivalent(request.model_dir, request.out_dir, error)) {
    throw UsageError("--out " + request.out_dir + " is the bundle to adapt; the source is kept: write elsewhere");
  }
  BundleWriter::check_target(request.out_dir);
}

// Without continued pretraining, each round starts where the bundle's own training did (an
// imported checkpoint, hf:DIR, or an encoder bundle), when it did from one.
std::string init_of(const Manifest& manifest) {
  const nlohmann::json& facts = manifest.training;
  if (!facts.is_object() || !facts.value("init_dir", nlohmann::json()).is_string()) return "";
  return facts["init_dir"].get<std::string>();
}

// The bundles a bundle holds as its members ("members/0", "members/1", ...: a cascade), in order.
std::vector<std::string> member_bundles(const std::string& dir) {
  std::vector<std::string> members;
  for (int i = 0; fs::is_regular_file(manifest_path(dir + "/members/" + std::to_string(i))); ++i) {
    members.push_back(dir + "/members/" + std::to_string(i));
  }
  if (members.empty()) throw ModelFormatError(dir, "a bundle made of other bundles holds no members/0");
  return members;
}

// A bundle made of others (a cascade): each member adapted with the others as its teachers
// (co-training: a feed title is taken when all members agree), then the bundle trained anew on
// the adapted members, as `train` would with them.
TrainOutcome adapt_members(const AdaptRequest& request, const Family& family, const Manifest& manifest) {
  const std::vector<std::string> members = member_bundles(request.model_dir);
  std::vector<bool> adaptable;
  for (const std::string& dir : members)
    adaptable.push_back(why_not_adaptable(Bundle::open(dir).manifest().family).empty());
  const fs::path parent = fs::absolute(request.out_dir).parent_path();
  const StagingFolder staging(parent.string(), ".adapt-members");
  std::vector<std::string> adapted;
  nlohmann::json facts = nlohmann::json::array();
  for (std::size_t i = 0; i < members.size(); ++i) {
    AdaptRequest member = request;
    member.model_dir = members[i];
    member.out_dir = staging.path() + "/" + std::to_string(i);
    for (std::size_t k = 0; k < members.size(); ++k) {
      if (k != i && adaptable[k]) member.teacher_dirs.push_back(members[k]);
    }
    spdlog::info("adapting member {} of {}: {}", i + 1, members.size(), members[i]);
    if (adaptable[i]) {
      adapt_model(member);
      adapted.push_back(member.out_dir);
      facts.push_back(Bundle::open(member.out_dir).manifest().training["adaptation"]);
    } else {
      adapted.push_back(members[i]);  // an LLM member is asked as it is
      facts.push_back(nullptr);
    }
  }
  TrainRequest train;
  train.family = manifest.family;
  train.data_dir = request.data_dir.empty() ? manifest.training.value("data", std::string()) : request.data_dir;
  train.files = request.files;
  train.out_dir = request.out_dir;
  train.config = family.with_trains_from(manifest.config, adapted);
  train.seed = request.seed;
  train.threads = request.threads;
  train.skip_bad_lines = request.skip_bad_lines;
  train.extra_facts = {
      {"adaptation",
       {{"method", "members adapted (co-training)"}, {"source_bundle", request.model_dir}, {"members", facts}}}};
  return train_model(train);
}

// The bundle's config with --set applied. A key the bundle's config lacks (written before the
// key existed) starts from the family's default, so that it can be set too.
nlohmann::json adapted_config(const Manifest& manifest, const std::vector<std::string>& overrides) {
  nlohmann::json config = manifest.config;
  const nlohmann::json defaults = strip_docs(default_config(manifest.family));
  for (const std::string& assignment : overrides) {
    const std::string key = assignment.substr(0, assignment.find('='));
    if (!config.contains(key) && defaults.contains(key)) config[key] = defaults[key];
    apply_override(config, assignment);
  }
  if (!overrides.empty()) make_classifier(manifest.family)->configure(config);  // a bad value fails before any work
  return config;
}

// The reader's answers to `ask`, checked against the feed: those with a class join the training
// titles answer_copies times. What was read goes to the manifest.
nlohmann::json learn_answers(const AdaptRequest& request, const Feed& feed, Splits& splits) {
  const std::unordered_set<std::string> feed_titles(feed.titles.begin(), feed.titles.end());
  const AnswerSet answers = read_answer_files(request.label_files, request.label_format, splits.labels, feed_titles);
  const std::size_t none = answers.count(kNoneAnswer), skipped = answers.count(kSkippedAnswer);
  const std::size_t in_class = answers.answers.size() - none - skipped;
  if (in_class + none == 0) {
    throw DataError(request.label_files.back(), 0,
                    "the --labels files hold no answer, only skipped titles: fill in "
                    "their label column (a class name or none)");
  }
  for (const Answer& a : answers.answers) {
    if (a.label < 0) continue;
    for (int k = 0; k < request.answer_copies; ++k) {
      splits.train.titles.push_back(a.title);
      splits.train.labels.push_back(a.label);
      if (!splits.train.line_numbers.empty()) splits.train.line_numbers.push_back(0);  // from no line of the file
    }
  }
  if (none > 0) {
    spdlog::warn(
        "{} answers 'none' (fits no class) are counted, not learnt yet: the model still names a class for "
        "such titles",
        none);
  }
  spdlog::info("learning from {} answered titles ({} copies each)", in_class, request.answer_copies);
  nlohmann::json facts = answers.facts(splits.labels);
  facts["copies"] = request.answer_copies;
  facts["none_learnt"] = false;
  return facts;
}

bool any_round_trained(const nlohmann::json& rounds) {
  return std::any_of(rounds.begin(), rounds.end(), [](const nlohmann::json& r) { return !r.contains("stopped"); });
}

}  // namespace

std::string why_not_adaptable(const std::string& name) {
  const Family& family = find_family(name);
  if (family.pays_per_prediction()) {
    return "a '" + name +
           "' model learns nothing from titles (it is asked, not trained); adapt the local models, "
           "or use it as --teacher";
  }
  return "";
}

TrainOutcome adapt_model(const AdaptRequest& request) {
  const Stopwatch watch;
  check_paths(request);
  request.self_training.check();
  const Bundle bundle = Bundle::open(request.model_dir);
  const Manifest& manifest = bundle.manifest();
  const Family& family = find_family(manifest.family);
  if (const std::string why = why_not_adaptable(family.name()); !why.empty())
    throw UsageError(request.model_dir + ": " + why);
  if (family.calibrated_by_members()) {
    if (!request.overrides.empty()) {
      throw UsageError("--set: a " + family.name() +
                       " bundle's members each have their own settings; adapt a member "
                       "with --set, then train the " +
                       family.name() + " from the adapted members");
    }
    return adapt_members(request, family, manifest);
  }
  const nlohmann::json config = adapted_config(manifest, request.overrides);
  if (request.answer_copies < 1) throw UsageError("--answer-copies must be at least 1");
  Splits splits = labelled_data(request, manifest);
  if (splits.labels.names != manifest.labels) {
    throw DataError(splits.source, 0, "class list differs from the labels of " + request.model_dir);
  }
  const int threads = given_thread_count(request.threads);
  FeedTraining feed;
  feed.feed = read_training_feed(request.unlabeled, request.self_training, request.seed, request.skip_bad_lines);
  const nlohmann::json answers =
      request.label_files.empty() ? nlohmann::json() : learn_answers(request, feed.feed, splits);
  if (family.pretrains() && request.self_training.pretrain) {
    pretrain_on_feed(feed, family, config, splits, request.out_dir, request.model_dir, request.seed, threads);
  }

  TrainContext ctx;
  ctx.dev = &splits.dev;
  ctx.labels = &splits.labels;
  ctx.unlabeled = &feed.feed.titles;
  ctx.seed = request.seed;
  ctx.threads = threads;
  ctx.out_dir = request.out_dir;
  ctx.init_dir = feed.encoder_folder ? feed.init_dir() : init_of(manifest);
  const CalibrateSetting calibrate = CalibrateSetting::kAuto;
  const RoundTrainer train_round{manifest.family, config, ctx, calibrate, &splits};

  TrainedModel trained{load_classifier(bundle), manifest.training,  manifest.family,
                       request.out_dir,         splits.data_sha256, request.seed};
  trained.model->set_threads(threads);
  const SelfTraining settings = request.self_training.for_family(manifest.family);
  const nlohmann::json rounds = run_rounds(trained, train_round, feed.feed.titles, request.teacher_dirs, settings);
  // No round trained (none asked, or none kept a feed title): the feed's vocabulary and the
  // encoder pretrained on it still make a model of their own.
  if (!any_round_trained(rounds)) {
    TrainedModel fresh = train_round(splits.train);
    trained.model = std::move(fresh.model);
    trained.facts = std::move(fresh.facts);
  }
  if (feed.encoder_folder) trained.facts.erase("init_dir");
  trained.facts["adaptation"] = adaptation_facts(feed, settings, request.teacher_dirs, rounds);
  trained.facts["adaptation"]["source_bundle"] = request.model_dir;
  if (!answers.is_null()) trained.facts["adaptation"]["answers"] = answers;
  if (!request.overrides.empty()) trained.facts["adaptation"]["overrides"] = request.overrides;
  trained.facts["adaptation"]["adapt_seconds"] = watch.seconds();
  spdlog::info("adapted in {:.1f} s", watch.seconds());
  return write_trained_bundle(std::move(trained), splits);
}

}  // namespace newscls
