#include "workflow/work_folder.h"

#include <filesystem>
#include <set>

#include <spdlog/spdlog.h>

#include "newscls/core/atomic_file.h"
#include "newscls/core/error.h"

namespace fs = std::filesystem;

namespace newscls {
namespace {

constexpr const char* kSettingsFile = "settings.json";

std::string settings_path(const std::string& work_dir) { return work_dir + "/" + kSettingsFile; }

// null when absent or no JSON object (a folder from before settings were recorded, or damaged).
nlohmann::json read_settings(const std::string& work_dir) {
  const std::string path = settings_path(work_dir);
  if (!fs::is_regular_file(path)) return nullptr;
  nlohmann::json j = nlohmann::json::parse(read_file(path), nullptr, /*allow_exceptions=*/false);
  return j.is_object() ? j : nlohmann::json();
}

void record(const std::string& work_dir, const nlohmann::json& settings) {
  make_directories(work_dir);
  write_json_atomic(settings_path(work_dir), settings);
}

// What is removed to start afresh must be newscls's: a folder holding its record, or nothing.
// A file, or a folder of files without the record, may be the user's (the name is only
// "<out>.work"): refused, naming it.
void refuse_foreign(const std::string& work_dir) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(work_dir, ec))) return;
  if (!fs::is_directory(fs::status(work_dir, ec))) {  // a link to a folder is a folder here
    throw UsageError(work_dir +
                     " is not a newscls work folder (it is a file), and training keeps its checkpoints "
                     "there: move it, or name another --out");
  }
  if (fs::is_regular_file(settings_path(work_dir), ec) || fs::is_empty(work_dir, ec)) return;
  std::string names;
  int listed = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(work_dir, ec)) {
    if (++listed <= 10) names += (names.empty() ? "" : ", ") + e.path().filename().string();
  }
  throw UsageError(work_dir + " holds files without newscls's record of a training (" + names +
                   (listed > 10 ? ", ..." : "") +
                   "), and training would replace them with its checkpoints: move them, or name another --out");
}

void start_afresh(const std::string& work_dir, const nlohmann::json& settings) {
  refuse_foreign(work_dir);
  fs::remove_all(work_dir);
  record(work_dir, settings);
}

// Anything besides the record: checkpoints, a pretrained encoder.
bool holds_work(const std::string& work_dir) {
  if (!fs::is_directory(work_dir)) return false;
  for (const fs::directory_entry& entry : fs::directory_iterator(work_dir)) {
    if (entry.path().filename() != kSettingsFile) return true;
  }
  return false;
}

// settings without the config keys that are not compared.
nlohmann::json compared(nlohmann::json settings, const std::vector<std::string>& unchecked) {
  if (settings.is_object() && settings.contains("config") && settings["config"].is_object()) {
    for (const std::string& key : unchecked) settings["config"].erase(key);
  }
  return settings;
}

std::string refusal(const std::string& work_dir, const nlohmann::json& before, const nlohmann::json& now) {
  return "--resume: " + work_dir + " holds a training started with other settings (" + describe_changes(before, now) +
         "); resume with those settings, or train without --resume to start over";
}

void add_change(std::string& out, const std::string& key, const nlohmann::json& before, const nlohmann::json& now) {
  if (!out.empty()) out += ", ";
  // A content hash names which input changed; its 64 digits say nothing else a user can use.
  const std::string hash_suffix = "_sha256";
  if (key.size() > hash_suffix.size() &&
      key.compare(key.size() - hash_suffix.size(), hash_suffix.size(), hash_suffix) == 0 && before.is_string() &&
      now.is_string()) {
    out += key.substr(0, key.size() - hash_suffix.size()) + ": other content, sha256 " +
           before.get<std::string>().substr(0, 12) + "... -> " + now.get<std::string>().substr(0, 12) + "...";
    return;
  }
  out += key + " " + (before.is_null() ? "unset" : before.dump()) + " -> " + (now.is_null() ? "unset" : now.dump());
}

}  // namespace

std::string describe_changes(const nlohmann::json& before, const nlohmann::json& now) {
  if (!before.is_object() || !now.is_object()) return before == now ? "" : before.dump() + " -> " + now.dump();
  std::string out;
  std::set<std::string> keys;
  for (const auto& j : {before, now}) {
    for (const auto& [key, value] : j.items()) keys.insert(key);
  }
  for (const std::string& key : keys) {
    const nlohmann::json a = before.value(key, nlohmann::json()), b = now.value(key, nlohmann::json());
    if (a == b) continue;
    if (a.is_object() && b.is_object()) {
      const std::string inner = describe_changes(a, b);
      if (!out.empty() && !inner.empty()) out += ", ";
      out += inner;
    } else {
      add_change(out, key, a, b);
    }
  }
  return out;
}

bool prepare_work_folder(const std::string& work_dir, const nlohmann::json& recorded, bool resume, ChangedWork changed,
                         const std::vector<std::string>& unchecked) {
  if (!holds_work(work_dir)) {
    // train --resume by hand (the pipeline continues every stage it can, changed or not): a
    // mistyped --out, or a run stopped before its first checkpoint, trains in full.
    if (resume && changed == ChangedWork::kRefuse) {
      spdlog::warn("--resume: {} holds no checkpoint to continue; training from the start", work_dir);
    }
    start_afresh(work_dir, recorded);
    return false;
  }
  const nlohmann::json raw = read_settings(work_dir);
  const nlohmann::json before = compared(raw, unchecked), settings = compared(recorded, unchecked);
  if (before == settings) {
    if (raw != recorded) record(work_dir, recorded);  // the unchecked keys as they are now
    return resume;
  }
  if (!resume) {
    start_afresh(work_dir, recorded);
    return false;
  }
  if (before.is_null()) {
    spdlog::warn("--resume: {} does not record the settings it was started with; continuing it unchecked", work_dir);
    record(work_dir, recorded);
    return true;
  }
  if (changed == ChangedWork::kRefuse) throw UsageError(refusal(work_dir, before, settings));
  spdlog::info("{} was started with other settings ({}): starting over", work_dir, describe_changes(before, settings));
  start_afresh(work_dir, recorded);
  return false;
}

void check_work_folder(const std::string& work_dir, const nlohmann::json& recorded,
                       const std::vector<std::string>& unchecked) {
  if (!holds_work(work_dir)) return;
  const nlohmann::json before = compared(read_settings(work_dir), unchecked), settings = compared(recorded, unchecked);
  if (!before.is_null() && before != settings) throw UsageError(refusal(work_dir, before, settings));
}

}  // namespace newscls
