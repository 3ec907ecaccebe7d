// The files eval and attention dumps write into a bundle's folder (bundle_files.h), told apart
// from anything else there.
#include "newscls/core/bundle_files.h"

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <system_error>

#include <nlohmann/json.hpp>

#include "newscls/core/atomic_file.h"

namespace newscls {

namespace fs = std::filesystem;

std::optional<std::size_t> dump_file_index(const std::string& name) {
  const fs::path file(name);
  const std::string stem = file.stem().string(), extension = file.extension().string();
  const bool title_file =
      std::find(std::begin(kDumpExtensions), std::end(kDumpExtensions), extension) != std::end(kDumpExtensions) &&
      !stem.empty() && stem.size() <= 18 &&
      std::all_of(stem.begin(), stem.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
      (stem.size() == 1 || stem[0] != '0');
  if (!title_file) return std::nullopt;
  return static_cast<std::size_t>(std::stoull(stem));
}

std::size_t dumped_titles(const std::string& dir) {
  const std::string path = dir + "/" + kDumpIndexFile;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return 0;
  const nlohmann::json j = nlohmann::json::parse(read_file(path), nullptr, /*allow_exceptions=*/false);
  return j.is_object() && j.value("titles", nlohmann::json()).is_number_unsigned() ? j["titles"].get<std::size_t>() : 0;
}

bool is_dump_entry(const std::string& name, std::size_t titles) {
  if (name == kDumpIndexFile) return true;
  if (pid_in_name(name, kDumpStagingPrefix) > 0) return true;
  const std::optional<std::size_t> index = dump_file_index(name);
  return index && *index < titles;
}

}  // namespace newscls
