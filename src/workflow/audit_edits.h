// `train --exclude FILE` and `train --relabel FILE`: the training titles an audit file
// (workflow/audit_file.h) flags left out, or given the class it suggests.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "newscls/core/data.h"

namespace newscls {

enum class AuditUse { kExclude, kRelabel };

struct AuditEdits {
  std::string path;  // "" = none
  AuditUse use = AuditUse::kExclude;
};

// Edits train as the audit file says, each row matched by its line in the training file, and
// checked: the line holds a training title, the same title, labelled as the row's `given`
// (DataError naming the audit file's line otherwise). A row whose title the dev set drawn from
// the same file holds (drawn_dev; null when dev is a file of its own) is checked and left as
// it is: the labels a model is selected and measured on are not the audit's to change.
// Returns the manifest's facts (file, sha256, use, rows, excluded or relabelled, left in dev).
nlohmann::json apply_audit(const AuditEdits& edits, const LabelSet& labels, Dataset& train, const Dataset* drawn_dev);

// The data's fingerprint with the audit file's (a bundle trained on edited titles was trained
// on other data: a resumed run must tell).
std::string audited_fingerprint(const std::string& data_sha256, const nlohmann::json& audit_facts);

}  // namespace newscls
