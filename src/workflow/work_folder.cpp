#include "workflow/work_folder.h"

#include <filesystem>
#include <set>

#include <spdlog/spdlog.h>

#include "newscls/atomic_file.h"
#include "newscls/error.h"

namespace fs = std::filesystem;

namespace newscls {
namespace {

constexpr const char* kSettingsFile = "settings.json";

std::string settings_path(const std::string& work_dir) { return work_dir + "/" + kSettingsFile; }

// null when absent or unreadable (a folder from before settings were recorded, or damaged).
nlohmann::json read_settings(const std::string& work_dir) {
  const std::string path = settings_path(work_dir);
  if (!fs::exists(path)) return nullptr;
  return nlohmann::json::parse(read_file(path), nullptr, /*allow_exceptions=*/false);
}

void start_afresh(const std::string& work_dir, const nlohmann::json& settings) {
  fs::remove_all(work_dir);
  make_directories(work_dir);
  write_file_atomic(settings_path(work_dir), settings.dump(2) + "\n");
}

bool has_work(const std::string& work_dir) { return fs::is_directory(work_dir) && !fs::is_empty(work_dir); }

void add_change(std::string& out, const std::string& key, const nlohmann::json& before, const nlohmann::json& now) {
  if (!out.empty()) out += ", ";
  out += key + " " + (before.is_null() ? "unset" : before.dump()) + " -> " + (now.is_null() ? "unset" : now.dump());
}

}  // namespace

std::string describe_changes(const nlohmann::json& before, const nlohmann::json& now) {
  std::string out;
  std::set<std::string> keys;
  for (const auto& j : {before, now}) {
    if (!j.is_object()) continue;
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

bool prepare_work_folder(const std::string& work_dir, const nlohmann::json& settings, bool resume,
                         ChangedWork changed) {
  if (!resume || !has_work(work_dir)) {
    start_afresh(work_dir, settings);
    return false;
  }
  const nlohmann::json before = read_settings(work_dir);
  if (before.is_null()) {
    spdlog::warn("--resume: {} does not record the settings it was started with; continuing it unchecked",
                 work_dir);
    return true;
  }
  if (before == settings) return true;
  const std::string what = describe_changes(before, settings);
  if (changed == ChangedWork::kRefuse) {
    throw UsageError("--resume: " + work_dir + " holds a training started with other settings (" + what +
                     "); resume with those settings, or train without --resume to start over");
  }
  spdlog::info("{} was started with other settings ({}): starting over", work_dir, what);
  start_afresh(work_dir, settings);
  return false;
}

}  // namespace newscls
