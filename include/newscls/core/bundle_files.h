// The files newscls writes into a bundle's folder besides its manifest and payloads: eval's
// (metrics.json beside predictions.tsv and figures) and an attention dump's (in attention/:
// i.json, i.npy and i.html per title, an index, a staging folder while it writes). Eval and the
// dump write them under these names; the bundle's checks count them as its own.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace newscls {

inline constexpr const char* kMetricsFile = "metrics.json";
inline constexpr const char* kPredictionsFile = "predictions.tsv";
inline constexpr const char* kConfusionFile = "confusion.svg";
inline constexpr const char* kReliabilityFile = "reliability.svg";
inline constexpr const char* kRiskCoverageFile = "risk_coverage.svg";
inline constexpr const char* kEvalFiles[] = {kMetricsFile, kPredictionsFile, kConfusionFile, kReliabilityFile,
                                             kRiskCoverageFile};

inline constexpr const char* kDumpIndexFile = "dumps.json";
inline constexpr const char* kDumpStagingPrefix = ".dumping";                 // StagingFolder adds ".<suffix>"
inline constexpr const char* kDumpExtensions[] = {".json", ".npy", ".html"};  // one title's files

// "12.npy" -> 12; nullopt for a name that is not one of a title's dump files ("012.json",
// "x.json" and "12.txt" are not).
std::optional<std::size_t> dump_file_index(const std::string& name);
// How many titles the dumps in `dir` cover, by its index file (0 without a readable one): its
// title files below that are the dump's, the others someone else's.
std::size_t dumped_titles(const std::string& dir);
// A name of the dump's own in its folder: its index, its staging folder (".dumping.<pid>"),
// a title's file below `titles`.
bool is_dump_entry(const std::string& name, std::size_t titles);

}  // namespace newscls
