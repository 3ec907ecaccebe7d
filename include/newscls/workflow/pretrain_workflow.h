// `newscls pretrain`: a family's encoder pretrained with masked-language modelling on the
// training titles of a data folder, written as an encoder bundle (`<family>-encoder`) that
// `train --init` starts from. The family pretrains (Family::pretrain); this checks the request
// (a family that pretrains, distributed only where it can, no classifier overwritten) first.
//
//   PretrainRequest o; o.family = "bert"; o.threads = 2;
//   PretrainOutcome out = run_pretrain(o);   // out.facts: pretrain_steps, pretrain_mlm_loss...
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "newscls/core/classifier.h"

namespace newscls {

struct PretrainRequest {
  std::string family, data_dir, config_file;
  std::string out_dir;                 // "" = runs/<family>-encoder
  std::vector<std::string> overrides;  // key=value
  std::uint64_t seed = 1;
  int threads = 1;  // resolved (>= 1): the app turns --threads 0 into the core count
  bool skip_bad_lines = false;
  DistributedSettings distributed;
};

struct PretrainOutcome {
  std::string out_dir;
  nlohmann::json facts;      // the family's pretraining facts
  bool wrote_bundle = true;  // false on a distributed rank other than 0
};

PretrainOutcome run_pretrain(const PretrainRequest& options);

}  // namespace newscls
