// Self-training on a reader's feed, shared by `train --unlabeled` and `adapt` (newscls/workflow/adapt_workflow.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "newscls/core/family.h"
#include "newscls/core/feed.h"
#include "newscls/workflow/train_workflow.h"
#include "workflow/splits.h"
#include "workflow/staging_folder.h"
#include "workflow/train_steps.h"

namespace newscls {

// A training's feed, and the encoder pretrained on it by a family that pretrains (its rounds
// all start from that encoder, as `train --init` would).
struct FeedTraining {
  Feed feed;
  std::unique_ptr<StagingFolder> encoder_folder;
  nlohmann::json pretrain_facts;
  std::string init_dir() const { return encoder_folder ? encoder_folder->path() + "/encoder" : ""; }
};

// The feed of `path`, read as the settings say, logged.
Feed read_training_feed(const std::string& path, const SelfTraining& settings, std::uint64_t seed, bool skip_bad_lines);

// The family's encoder pretrained on the feed into a staging folder beside out_dir (feed.init_dir()):
// a new one on the training titles plus the feed, or, with continue_from, that bundle's encoder
// continued on the feed.
void pretrain_on_feed(FeedTraining& feed, const Family& family, const nlohmann::json& config, const Splits& splits,
                      const std::string& out_dir, const std::string& continue_from, std::uint64_t seed, int threads);

// Reads request.unlabeled and, for a family that pretrains and no --init, pretrains an encoder
// on the training titles plus the feed.
FeedTraining open_feed_training(const TrainRequest& request, const Splits& splits, const nlohmann::json& config,
                                const std::string& out_dir, int threads);

// Round 0 trained (trained.model, calibrated as the request says): the self-training rounds,
// each training afresh on ctx's context with the kept feed titles added; the adaptation facts
// are recorded in the returned model's facts.
TrainedModel self_trained(TrainedModel trained, const TrainRequest& request, const Splits& splits,
                          const TrainContext& ctx, const FeedTraining& feed, CalibrateSetting calibrate);

}  // namespace newscls
