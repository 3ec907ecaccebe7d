// The work folder beside a bundle ("<out>.work"), where a family that resumes keeps its
// checkpoints. It records what the training in it was started with (settings.json: family,
// config, seed, data, --init), so that --resume never continues a checkpoint under other settings.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace newscls {

enum class ChangedWork {
  kRefuse,     // `train --resume`: a usage error naming what changed
  kStartOver,  // the pipeline: the stage trains from nothing
};

// Readies work_dir for a training started with `settings`. Without resume the folder is
// emptied (an older run's checkpoints must not be found by a later --resume). With resume
// its checkpoints are kept when they were made with the same settings; otherwise `changed`
// says what happens. Returns whether earlier work is continued.
bool prepare_work_folder(const std::string& work_dir, const nlohmann::json& settings, bool resume,
                         ChangedWork changed);

// "lr 2e-05 -> 3e-05, seed 1 -> 2": what differs between two settings records.
std::string describe_changes(const nlohmann::json& before, const nlohmann::json& now);

}  // namespace newscls
