// Fuzzes manifest_from_json on JSON parsed from the input, both as it is and merged over a
// valid manifest (so mutations reach the checks behind the first few keys). A manifest
// either comes back keeping the bundle format's promises, or ModelFormatError is thrown.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "fuzz_support.h"
#include "newscls/core/bundle.h"
#include "newscls/core/error.h"

namespace {

using nlohmann::json;

const json& valid_manifest() {
  static const json* base = new json(json::parse(R"({
    "format": "newscls-bundle", "format_version": 1, "family": "tfidf-rf",
    "labels": ["finance", "realty", "stocks"], "config": {"n_trees": 10},
    "payloads": {"forest.bin": {"sha256": "00"}, "tfidf.bin": {"sha256": "11"}},
    "training": {"seconds": 1.5}, "created_by": "newscls 0.1.0"})"));
  return *base;
}

void check_accepted(const json& j, const newscls::Manifest& m) {
  NEWSCLS_FUZZ_CHECK(m.format_version >= 1 && m.format_version <= newscls::kBundleFormatVersion);
  // The stored number itself, not a narrowed copy of it, must be a supported version.
  NEWSCLS_FUZZ_CHECK(j.at("format_version") == json(m.format_version));
  NEWSCLS_FUZZ_CHECK(m.labels.size() >= 2);
  NEWSCLS_FUZZ_CHECK(m.config.is_object());
  for (const auto& [name, sha] : m.payloads) {
    NEWSCLS_FUZZ_CHECK(!name.empty() && name != "." && name != ".." && name != "manifest.json");
    NEWSCLS_FUZZ_CHECK(name.find('/') == std::string::npos);
  }
  // What is written back reads back the same.
  const newscls::Manifest again = newscls::manifest_from_json(newscls::manifest_to_json(m), "again");
  NEWSCLS_FUZZ_CHECK(again.family == m.family && again.labels == m.labels && again.config == m.config &&
                     again.training == m.training && again.payloads == m.payloads &&
                     again.format_version == m.format_version);
}

void try_manifest(const json& j) {
  try {
    const newscls::Manifest m = newscls::manifest_from_json(j, "fuzz/manifest.json");
    check_accepted(j, m);
  } catch (const newscls::ModelFormatError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const json j = json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  try_manifest(j);
  if (j.is_object()) {
    json merged = valid_manifest();
    merged.merge_patch(j);
    try_manifest(merged);
  }
  return 0;
}
