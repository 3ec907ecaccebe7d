#include "newscls/core/bundle.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "newscls/core/atomic_file.h"
#include "newscls/core/bundle_files.h"
#include "newscls/core/error.h"
#include "newscls/core/interrupt.h"
#include "newscls/core/sha256.h"

namespace fs = std::filesystem;

namespace newscls {

std::string manifest_path(const std::string& bundle_dir) { return bundle_dir + "/" + kManifestFile; }
namespace {

const nlohmann::json& require(const nlohmann::json& j, const char* key, nlohmann::json::value_t type,
                              const std::string& origin) {
  auto it = j.find(key);
  if (it == j.end()) throw ModelFormatError(origin, std::string("manifest has no '") + key + "'");
  const bool ok = it->type() == type || (type == nlohmann::json::value_t::number_integer && it->is_number_unsigned());
  if (!ok) throw ModelFormatError(origin, std::string("manifest key '") + key + "' has the wrong type");
  return *it;
}

// Payload names are plain file names: a manifest must not point outside its bundle.
void check_payload_name(const std::string& name, const std::string& origin) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos || name == kManifestFile) {
    throw ModelFormatError(origin, "bad payload name '" + name + "'");
  }
}

void remove_tree_quietly(const std::string& dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);
}

bool is_bundle_or_empty(const std::string& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return true;
  if (!fs::is_directory(dir, ec)) return false;
  return fs::exists(fs::path(dir) / kManifestFile, ec) || fs::is_empty(dir, ec);
}

// "x.tmp.<pid>": a temporary file of an interrupted write counts as its target x.
std::string without_temp_suffix(const std::string& name) {
  const std::size_t at = name.rfind(".tmp.");
  if (at == std::string::npos || at + 5 == name.size()) return name;
  const bool digits = std::all_of(name.begin() + static_cast<std::ptrdiff_t>(at + 5), name.end(),
                                  [](char c) { return c >= '0' && c <= '9'; });
  return digits ? name.substr(0, at) : name;
}

bool is_eval_file(const std::string& name) {
  return std::find(std::begin(kEvalFiles), std::end(kEvalFiles), name) != std::end(kEvalFiles);
}

// Whether eval (anywhere) or a dump (in attention/, whose index covers `dumped` titles) writes
// this entry: files, and a dump's staging folder.
bool written_there(const std::string& name, bool folder, bool in_attention, std::size_t dumped) {
  if (!in_attention) return !folder && is_eval_file(name);
  if (!is_dump_entry(name, dumped)) return false;
  return !folder || name.rfind(kDumpStagingPrefix, 0) == 0;
}

// Adds to `foreign` what in folder `dir` (shown as `shown`) newscls did not write: at a bundle's
// top its payloads, train's and eval's files, a compression report and its figures, a cascade's
// members, compress's dev/ evaluation and eval's attention/ dumps; inside dev/ and attention/,
// only what eval and a dump write there.
void list_foreign(const fs::path& dir, const std::string& shown, const std::map<std::string, std::string>* payloads,
                  bool in_attention, std::vector<std::string>& foreign) {
  const std::size_t dumped = in_attention ? dumped_titles(dir.string()) : 0;
  static const char* const kTop[] = {kManifestFile, "compression.json", "head_importance.svg", "prune_dev_accuracy.svg",
                                     "members"};
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = without_temp_suffix(e.path().filename().string());
    const bool folder = e.is_directory(ec);
    const bool top = payloads != nullptr;
    if (written_there(name, folder, in_attention, dumped)) continue;
    if (!in_attention && folder && name == "attention") {
      list_foreign(e.path(), shown + name + "/", nullptr, true, foreign);
      continue;
    }
    if (top && folder && name == "dev") {
      list_foreign(e.path(), shown + name + "/", nullptr, false, foreign);
      continue;
    }
    if (top && (payloads->count(name) > 0 || std::find(std::begin(kTop), std::end(kTop), name) != std::end(kTop)))
      continue;
    foreign.push_back(shown + e.path().filename().string() + (folder ? "/" : ""));
  }
}

// Replacing a bundle replaces its folder: files the user put there would go with it.
void refuse_foreign_entries(const std::string& dir) {
  Manifest manifest;
  std::string unreadable;
  try {
    manifest = Bundle::read_manifest(dir);
  } catch (const Error& e) {
    unreadable = e.what();  // another program's manifest.json, or a broken or newer bundle's
  }
  std::vector<std::string> foreign;
  list_foreign(dir, "", &manifest.payloads, false, foreign);
  if (foreign.empty()) return;
  std::sort(foreign.begin(), foreign.end());
  constexpr std::size_t kShown = 10;
  std::string names;
  for (std::size_t i = 0; i < std::min(foreign.size(), kShown); ++i) names += (i == 0 ? "" : ", ") + foreign[i];
  if (foreign.size() > kShown) names += " and " + std::to_string(foreign.size() - kShown) + " more";
  if (!unreadable.empty()) {
    throw IoError(dir, "newscls cannot read its manifest.json (" + unreadable +
                           "), and it holds files a new bundle would not keep (" + names +
                           "); delete the folder if it is a broken or older bundle, else choose another --out");
  }
  throw IoError(dir, "holds files a new bundle would not keep (" + names +
                         "); replacing the bundle would delete them: move them, or choose another --out");
}

// A bundle written inside another (a cascade's members/1, a subfolder of a bundle) would replace
// a part of it, or make it a folder that cannot be replaced.
void refuse_inside_bundle(const std::string& final_dir) {
  std::error_code ec;
  const fs::path target = fs::weakly_canonical(fs::absolute(final_dir, ec), ec);
  if (ec) return;
  const std::string holder = bundle_holding(target.parent_path().string());
  if (!holder.empty())
    throw IoError(final_dir,
                  "lies inside the model bundle " + holder + ", which it would change; choose another --out");
}

}  // namespace

namespace {

// path itself, its links not followed.
bool names_bundle_file(const std::string& path) {
  const fs::path folder = fs::path(path).parent_path();
  std::error_code ec;
  if (!fs::exists(folder / kManifestFile, ec)) return false;
  const std::string name = fs::path(path).filename().string();
  if (name == kManifestFile) return true;
  try {
    return Bundle::read_manifest(folder.empty() ? "." : folder.string()).payloads.count(name) > 0;
  } catch (const Error&) {
    return false;  // not a readable bundle: nothing of one to protect
  }
}

}  // namespace

bool is_bundle_file(const std::string& path) {
  // A link is replaced through (AtomicOutputFile), so the file it names is the one at stake.
  const std::string target = link_target(path);
  return names_bundle_file(path) || (target != path && names_bundle_file(target));
}

void refuse_output_over_bundle(const std::string& option, const std::string& output, const std::string& bundle_dir) {
  if (output == "-") return;
  std::vector<std::string> files{manifest_path(bundle_dir)};
  for (const auto& payload : Bundle::read_manifest(bundle_dir).payloads)
    files.push_back(bundle_dir + "/" + payload.first);
  std::error_code ec;
  const fs::path resolved = fs::weakly_canonical(fs::absolute(output, ec), ec);  // a link to another bundle's file
  bool replaces = is_bundle_file(output) || (!ec && is_bundle_file(resolved.string()));
  for (const std::string& f : files) replaces = replaces || same_file(output, f);
  if (replaces) throw UsageError(option + " " + output + " is a file of a model bundle; write to another file");
  // Beside them, a bundle's metrics.json, predictions.tsv and figures were replaced without a word.
  if (const std::string holder = bundle_holding((ec ? fs::path(output) : resolved).parent_path().string());
      !holder.empty()) {
    throw UsageError(option + " " + output + " is inside the model bundle " + holder + "; write to a file outside it");
  }
}

nlohmann::json manifest_to_json(const Manifest& m) {
  nlohmann::json payloads = nlohmann::json::object();
  for (const auto& [name, sha] : m.payloads) payloads[name] = {{"sha256", sha}};
  return {{"format", kBundleFormat}, {"format_version", m.format_version},
          {"family", m.family},      {"labels", m.labels},
          {"config", m.config},      {"payloads", payloads},
          {"training", m.training},  {"created_by", "newscls 0.1.0"}};
}

Manifest manifest_from_json(const nlohmann::json& j, const std::string& origin) {
  using T = nlohmann::json::value_t;
  if (!j.is_object()) throw ModelFormatError(origin, "manifest is not a JSON object");
  if (require(j, "format", T::string, origin) != kBundleFormat) {
    throw ModelFormatError(origin,
                           "not a newscls bundle manifest (format is not '" + std::string(kBundleFormat) + "')");
  }
  Manifest m;
  // Compared before narrowing to int, so 4294967297 is not taken for version 1.
  const nlohmann::json& version = require(j, "format_version", T::number_integer, origin);
  const bool supported = version.is_number_unsigned()
                             ? version.get<std::uint64_t>() >= 1 && version.get<std::uint64_t>() <= kBundleFormatVersion
                             : version.get<std::int64_t>() >= 1 && version.get<std::int64_t>() <= kBundleFormatVersion;
  if (!supported) {
    throw ModelFormatError(origin, "bundle format version " + version.dump() +
                                       " is not supported; this newscls reads versions 1.." +
                                       std::to_string(kBundleFormatVersion));
  }
  m.format_version = version.get<int>();
  m.family = require(j, "family", T::string, origin).get<std::string>();
  for (const auto& label : require(j, "labels", T::array, origin)) {
    if (!label.is_string()) throw ModelFormatError(origin, "manifest labels must be strings");
    const std::string name = label.get<std::string>();
    if (name.empty() || std::find(m.labels.begin(), m.labels.end(), name) != m.labels.end()) {
      throw ModelFormatError(origin, "manifest label '" + name + "' is empty or listed twice");
    }
    m.labels.push_back(name);
  }
  if (m.labels.size() < 2) throw ModelFormatError(origin, "manifest lists fewer than 2 labels");
  m.config = require(j, "config", T::object, origin);
  // null: a family that reported no facts.
  if (j.contains("training") && !j.at("training").is_null()) m.training = require(j, "training", T::object, origin);
  const auto& payloads = require(j, "payloads", T::object, origin);
  for (auto it = payloads.begin(); it != payloads.end(); ++it) {
    check_payload_name(it.key(), origin);
    const auto& sha = require(it.value(), "sha256", T::string, origin + " payload " + it.key());
    m.payloads[it.key()] = sha.get<std::string>();
  }
  return m;
}

namespace {

// The IoError the BundleWriter would meet replacing final_dir (links already followed).
void check_replaceable(const std::string& final_dir) {
  if (!is_bundle_or_empty(final_dir))
    throw IoError(final_dir, "exists and is not a newscls bundle; refusing to replace it");
  std::error_code ec;
  if (fs::is_directory(final_dir, ec)) refuse_foreign_entries(final_dir);
  for (fs::path up = fs::path(final_dir).parent_path(); !up.empty(); up = up.parent_path()) {
    if (fs::exists(up, ec) && !fs::is_directory(up, ec)) throw IoError(final_dir, up.string() + " is not a directory");
    if (up == up.parent_path()) break;
  }
  refuse_inside_bundle(final_dir);
}

// A folder that cannot be made there (a read-only file system, a name too long) is found
// before the work, not after hours of training. Probed in the nearest folder that exists:
// none is made for the check.
void probe_writable(const std::string& final_dir) {
  fs::path parent = fs::path(final_dir).parent_path();
  if (parent.empty()) parent = ".";
  std::error_code ec;
  fs::path existing = parent;
  while (!fs::exists(existing, ec)) {
    if (fs::is_symlink(fs::symlink_status(existing, ec))) {  // an unmounted disk's link: not "." instead
      throw IoError(final_dir, "cannot be written: " + existing.string() + " is a link to nothing");
    }
    if (!existing.has_parent_path() || existing == existing.parent_path()) {
      existing = existing.is_absolute() ? existing.root_path() : fs::path(".");  // "runs/x" with no runs/
      break;
    }
    existing = existing.parent_path();
  }
  const std::string probe =
      existing == parent ? temp_path_for(final_dir) : temp_path_for((existing / "probe").string());
  fs::create_directory(probe, ec);
  if (ec) throw IoError(final_dir, "cannot be written: " + ec.message());
  fs::remove(probe, ec);
}

}  // namespace

void BundleWriter::check_target(const std::string& out_dir) {
  // A link to a bundle folder is written through, as AtomicOutputFile writes through a link.
  const std::string final_dir = link_target(without_trailing_slashes(out_dir));
  check_replaceable(final_dir);
  probe_writable(final_dir);
}

BundleWriter::BundleWriter(std::string final_dir)
    : final_dir_(link_target(without_trailing_slashes(std::move(final_dir)))) {
  check_replaceable(final_dir_);  // no probe: the temporary folder made below is one
  const fs::path parent = fs::path(final_dir_).parent_path();
  if (!parent.empty()) make_directories(parent.string());
  tmp_dir_ = temp_path_for(final_dir_);
  remove_tree_quietly(tmp_dir_);
  make_directories(tmp_dir_);
}

BundleWriter::~BundleWriter() {
  if (!committed_) remove_tree_quietly(tmp_dir_);
}

std::string BundleWriter::payload_path(const std::string& name) {
  check_payload_name(name, tmp_dir_);
  payload_names_.push_back(name);
  return file_path(name);
}

std::string BundleWriter::file_path(const std::string& name) const { return tmp_dir_ + "/" + name; }

void BundleWriter::commit(Manifest manifest) {
  // Ctrl-C after the work but before this point keeps the bundle that was there (it was
  // replaced, exit 0, when the signal came while the files were written).
  check_interrupted();
  manifest.payloads.clear();
  for (const std::string& name : payload_names_) manifest.payloads[name] = sha256_file_hex(file_path(name));
  write_json_atomic(file_path(kManifestFile), manifest_to_json(manifest));
  // Payload writers only flush; after a crash the renamed directory must not hold files
  // whose blocks never reached the disk.
  sync_tree(tmp_dir_);
  replace_directory(tmp_dir_, final_dir_);
  committed_ = true;
  const fs::path parent = fs::path(final_dir_).parent_path();
  sync_path(parent.empty() ? "." : parent.string());  // records the rename itself
}

Manifest Bundle::read_manifest(const std::string& dir) {
  const std::string path = manifest_path(dir);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw ModelFormatError(dir, fs::exists(dir, ec) ? "is a file, not a model directory" : "no such model directory");
  }
  if (!fs::exists(path, ec)) throw ModelFormatError(dir, "not a newscls bundle (no manifest.json)");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(path));
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range: a number too large
    throw ModelFormatError(path, std::string("not valid JSON: ") + e.what());
  }
  try {
    return manifest_from_json(j, path);
  } catch (const nlohmann::json::exception& e) {
    throw ModelFormatError(path, std::string("malformed manifest: ") + e.what());
  }
}

std::string bundle_holding(const std::string& path) {
  std::error_code ec;
  const fs::path start = fs::weakly_canonical(fs::absolute(path.empty() ? "." : path, ec), ec);
  if (ec) return "";
  for (fs::path dir = start; !dir.empty(); dir = dir.parent_path()) {
    if (fs::is_regular_file(dir / kManifestFile, ec)) {
      try {
        Bundle::read_manifest(dir.string());
        return dir.string();
      } catch (const Error&) {
        // another program's manifest.json: an ordinary folder to newscls
      }
    }
    if (dir == dir.parent_path()) break;
  }
  return "";
}

Bundle Bundle::open(const std::string& dir) {
  Bundle bundle;
  bundle.dir_ = dir;
  bundle.manifest_ = read_manifest(dir);
  std::error_code ec;
  for (const auto& [name, sha] : bundle.manifest_.payloads) {
    const std::string path = dir + "/" + name;
    if (!fs::is_regular_file(path, ec)) throw ModelFormatError(path, "payload listed in the manifest is missing");
    if (sha256_file_hex(path) != sha) {
      throw ModelFormatError(path, "checksum mismatch (the file is corrupt or was modified)");
    }
  }
  return bundle;
}

namespace {

std::uintmax_t payload_bytes(const fs::path& dir, const Manifest& manifest) {
  std::uintmax_t bytes = 0;
  for (const auto& [name, sha] : manifest.payloads) bytes += fs::file_size(dir / name);
  return bytes;
}

}  // namespace

// Nested manifests are not verified: hashing tens of megabytes again only to count them would
// slow every report.
std::uintmax_t Bundle::total_bytes() const {
  std::uintmax_t bytes = payload_bytes(dir_, manifest_);
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(dir_)) {
    if (!e.is_directory() || !fs::exists(e.path() / kManifestFile)) continue;
    bytes += payload_bytes(e.path(), read_manifest(e.path().string()));
  }
  return bytes;
}

std::string Bundle::payload_path(const std::string& name) const {
  if (manifest_.payloads.count(name) == 0) {
    throw ModelFormatError(manifest_path(dir_), "lists no payload '" + name + "'");
  }
  return dir_ + "/" + name;
}

}  // namespace newscls
