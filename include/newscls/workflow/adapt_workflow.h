// Adapting a model to the reader's own outlet from titles of it without labels: `newscls adapt`
// (a trained bundle) and `newscls train --unlabeled` (from the start).
//
// Three things, each for every family that can use it:
// - the feed counts for the family's vocabulary and document frequencies (TrainContext::unlabeled);
// - a family that pretrains an encoder (bert) pretrains on the feed too: `train` from scratch on
//   the training titles plus the feed, `adapt` by continuing the bundle's own encoder on the
//   feed, its vocabulary grown by the feed's frequent new characters (domain-adaptive
//   pretraining, Gururangan et al. 2020); every round fine-tunes from that encoder;
// - self-training: the model, with any teachers (`--teacher`, co-training: a title is taken when
//   all agree), labels the feed; confident titles, capped per class near the labelled data's
//   class shares (workflow/pseudo_labels.h), join the labelled ones and the family trains again;
//   rounds repeat until the kept labels change by less than stable_change, at most `rounds`
//   (by default the family's Family::default_self_training_rounds(): 1 for bert, 0 elsewhere,
//   as chosen on dev and reverse validation).
// The result is written like a trained bundle (test figures, calibration on dev, atomically), its
// manifest's training facts holding "adaptation": the feed's line count and sha256, the method,
// and each round's figures. The source bundle is only read.
//
// With the reader's answers (--labels: `newscls ask`'s files, labelled; newscls/workflow/ask_workflow.h),
// each title answered with a class joins the labelled training titles answer_copies times (a few
// hundred answers against THUCNews's 180,000 titles would count for little once each); answers
// `none` are read, checked and counted in the manifest ("answers"), not learnt yet.
//
//   AdaptRequest r;
//   r.model_dir = "runs/fasttext"; r.unlabeled = "my_feed.txt"; r.out_dir = "runs/fasttext-adapted";
//   TrainOutcome out = adapt_model(r);
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "newscls/core/record_reader.h"
#include "newscls/workflow/ask_workflow.h"
#include "newscls/workflow/train_workflow.h"

namespace newscls {

// Chosen on held-out answers of a feed (docs/CLI.md, "ask").
constexpr int kDefaultAnswerCopies = 5;

struct AdaptRequest {
  std::string model_dir;                  // the bundle to adapt (read only)
  std::string unlabeled;                  // the feed, one title per line; "-" = stdin
  std::string out_dir;                    // the adapted bundle
  std::string data_dir;                   // "" = the data folder the bundle was trained on (its manifest)
  DataFiles files;                        // labelled files instead of a folder (--train, --dev, --test)
  std::vector<std::string> teacher_dirs;  // bundles voting beside the model (co-training)
  SelfTraining self_training;
  // key=value over the bundle's config for the retraining and continued pretraining (--set),
  // e.g. continued_pretrain_epochs=20 for longer continued pretraining (bert); not for a cascade.
  std::vector<std::string> overrides;
  std::vector<std::string> label_files;  // the reader's answers to `ask` (--labels)
  FormatOptions label_format = default_answer_format();
  int answer_copies = kDefaultAnswerCopies;  // how many times an answered title counts in training
  std::uint64_t seed = 1;
  int threads = 1;  // resolved (>= 1): the app turns --threads 0 into the core count
  bool skip_bad_lines = false;
};

TrainOutcome adapt_model(const AdaptRequest& request);

// Why `adapt` refuses bundles of this family (an LLM is asked, not trained; a cascade is made of
// other bundles), or "" when it adapts them.
std::string why_not_adaptable(const std::string& family);

}  // namespace newscls
