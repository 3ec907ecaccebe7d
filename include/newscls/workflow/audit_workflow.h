// `newscls audit`: which training titles are likely mislabelled, by cross-validated confident
// learning. The family is trained K times as `train` trains it (its own settings, --set), each
// time without one of K stratified, seeded folds, which that model then predicts; from these
// out-of-fold probabilities, confident learning (Northcutt et al. 2021) estimates how many
// titles of each given class truly belong to each other class and flags that many, the most
// doubtful first. The flagged titles go to a CSV (src/workflow/audit_file.h) that
// `train --exclude` or `train --relabel` reads.
//
//   AuditRequest r; r.family = "fasttext"; r.out = "audit.csv";
//   AuditOutcome o = run_audit(r);   // o.summary: the given -> suggested counts
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "newscls/core/record_reader.h"

namespace newscls {

struct AuditRequest {
  std::string family;
  std::string data_dir;  // "" = the default search (resolve_data_dir)
  DataFiles files;       // --train [--classes] [--dev] instead of a data folder (test unused)
  std::string out;       // the CSV; "-" = stdout
  std::string config_file;
  std::vector<std::string> overrides;  // key=value, the family's config for the folds
  int folds = 5;
  std::string filter = "class";  // one of audit_filter_names() (class: chosen on dev, docs/CLI.md)
  std::uint64_t seed = 1;
  int threads = 1;  // resolved (>= 1)
  bool skip_bad_lines = false;
};

struct AuditOutcome {
  std::size_t titles = 0;                                  // in the training file
  std::size_t judged = 0;                                  // with out-of-fold probabilities
  std::size_t flagged = 0;                                 // rows written
  double out_of_fold_accuracy = 0;                         // against the given labels
  std::vector<std::pair<std::string, std::size_t>> pairs;  // "given -> suggested", most frequent first
  double seconds = 0;
};

// --filter's values: joint, noise-rate, class, both (src/workflow/confident_learning.h).
const std::vector<std::string>& audit_filter_names();

AuditOutcome run_audit(const AuditRequest& request);

// The summary `audit` prints on stderr: the flagged count and each given -> suggested pair's.
std::string audit_summary(const AuditOutcome& outcome, const std::string& out);

}  // namespace newscls
