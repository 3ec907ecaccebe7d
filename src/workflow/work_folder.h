// The work folder beside a bundle ("<out>.work"), where a family that resumes keeps its
// checkpoints. It records what the training in it was started with (settings.json: family,
// config, seed, data, --init, world size), so that --resume never continues a checkpoint made
// under other settings.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace newscls {

enum class ChangedWork {
  kRefuse,     // `train --resume`: a usage error naming what changed
  kStartOver,  // the pipeline: the stage trains from nothing
};

// Readies work_dir for a training started with `settings` (a JSON object); returns whether
// its checkpoints are continued. Work made under the same settings is kept, with or without
// resume (it is of the same training). Work made under other settings is removed when not
// resuming; when resuming, `changed` says what happens. A folder holding nothing but its
// record has nothing to lose and takes the new settings. A folder without a readable record
// (older than the record, or damaged) is continued on resume, with a warning, and removed
// otherwise; either way it records the settings from now on.
// Config keys named in `unchecked` (how a run goes, not what it computes: threads) are
// recorded but not compared.
bool prepare_work_folder(const std::string& work_dir, const nlohmann::json& settings, bool resume, ChangedWork changed,
                         const std::vector<std::string>& unchecked = {});

// For a process that must not write the folder (a distributed rank other than 0, which may
// share it): throws the usage error prepare_work_folder would when resuming work recorded
// under other settings; otherwise does nothing.
void check_work_folder(const std::string& work_dir, const nlohmann::json& settings,
                       const std::vector<std::string>& unchecked = {});

// "lr 2e-05 -> 3e-05, seed 1 -> 2": what differs between two settings records.
std::string describe_changes(const nlohmann::json& before, const nlohmann::json& now);

}  // namespace newscls
