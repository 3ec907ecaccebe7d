// Model bundles: a directory with manifest.json plus payload files.
//
// manifest.json: {"format": "newscls-bundle", "format_version": 1, "family": "tfidf-rf",
//   "labels": [...], "config": {...}, "payloads": {"forest.bin": {"sha256": "...",
//   "bytes": n}}, "training": {...}, "created_by": "newscls 0.1.0"}.
// BundleWriter builds the whole bundle in "<dir>.tmp.<pid>" and renames it over <dir> only
// at commit(), so an interrupted run never leaves a half-written bundle under its name.
// Bundle::open refuses, with ModelFormatError, a newer format version (naming both), a
// missing or mistyped manifest key, a missing payload, or a checksum mismatch.
//
//   BundleWriter w(out_dir);
//   model.save(w);                       // payloads via w.payload_path("forest.bin")
//   write_file_atomic(w.file_path("metrics.json"), ...);   // extra, unchecked files
//   w.commit(manifest);
//   Bundle b = Bundle::open(out_dir);    // verified
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace newscls {

constexpr const char* kBundleFormat = "newscls-bundle";
constexpr int kBundleFormatVersion = 1;
// The manifest's file name in a bundle folder; manifest_path(dir) is dir + "/" + kManifestFile.
constexpr const char* kManifestFile = "manifest.json";
std::string manifest_path(const std::string& bundle_dir);

// Keys of the training facts that layers other than their writer read. kCalibrationFact:
// the temperature train fitted on dev ({"temperature": T, "floor": f, ...}; see
// workflow/calibration.h), which load_classifier applies. kUncalibratedMembersKey: in a
// cascade's facts, the stage names of members without one, whose scores it uses as they are.
constexpr const char* kCalibrationFact = "calibration";
constexpr const char* kUncalibratedMembersKey = "uncalibrated_members";

struct Manifest {
  std::string family;
  int format_version = kBundleFormatVersion;
  std::vector<std::string> labels;
  nlohmann::json config = nlohmann::json::object();
  nlohmann::json training = nlohmann::json::object();
  // payload name -> sha256 hex; filled by BundleWriter::commit.
  std::map<std::string, std::string> payloads;
};

nlohmann::json manifest_to_json(const Manifest& m);
// origin names the file in errors.
Manifest manifest_from_json(const nlohmann::json& j, const std::string& origin);

class BundleWriter {
 public:
  explicit BundleWriter(std::string final_dir);
  ~BundleWriter();
  // Throws the IoError the constructor would, and one for a folder that cannot be written
  // there: called before the work that fills the bundle, so a bad --out is refused before
  // minutes of training, not after. A symbolic link is written through: its folder is replaced.
  static void check_target(const std::string& out_dir);
  BundleWriter(const BundleWriter&) = delete;
  BundleWriter& operator=(const BundleWriter&) = delete;

  // Path of a checksummed payload inside the temporary bundle directory.
  std::string payload_path(const std::string& name);
  // Path of an extra file (metrics.json, confusion.svg) that travels with the bundle.
  std::string file_path(const std::string& name) const;
  // Hashes the payloads, writes manifest.json and renames the directory into place.
  void commit(Manifest manifest);

 private:
  std::string final_dir_, tmp_dir_;
  std::vector<std::string> payload_names_;
  bool committed_ = false;
};

// Whether path is a file of whatever bundle holds it (a cascade's members are bundles inside
// its folder): its manifest.json or a payload that manifest lists.
bool is_bundle_file(const std::string& path);
// Refuses (UsageError) an output file that would replace a bundle's file, or a file of the
// bundle in bundle_dir however it is named (a link): the bundle would no longer load.
void refuse_output_over_bundle(const std::string& option, const std::string& output, const std::string& bundle_dir);

// The nearest folder at or above path, links resolved, that holds a newscls bundle (another
// program's manifest.json does not count); empty when there is none.
std::string bundle_holding(const std::string& path);

class Bundle {
 public:
  static Bundle open(const std::string& dir);
  // The manifest alone, checked as open checks it, without hashing the payloads (for a
  // caller that only needs what it lists, such as their sizes).
  static Manifest read_manifest(const std::string& dir);
  // Bytes of the payloads, the bundles nested in it included (a cascade carries copies of
  // its members). Nested manifests are read, not verified: their owner verifies them on load.
  std::uintmax_t total_bytes() const;
  const Manifest& manifest() const { return manifest_; }
  const std::string& dir() const { return dir_; }
  // Throws ModelFormatError when the manifest lists no such payload.
  std::string payload_path(const std::string& name) const;

 private:
  std::string dir_;
  Manifest manifest_;
};

}  // namespace newscls
