// The registry of model families: the only code that knows which families exist.
//
// It is generated from the newscls_register_family() calls in the family folders'
// CMakeLists.txt, in the order src/CMakeLists.txt adds them (the order of cost and power the
// pipeline runs them in). Families that need LibTorch live in plugins loaded on first use,
// so commands that never touch them start without LibTorch.
//
//   for (const std::string& name : known_families()) ...
//   auto model = make_classifier("tfidf-rf");
//   auto again = load_classifier("runs/tfidf-rf");
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "newscls/core/bundle.h"
#include "newscls/core/classifier.h"
#include "newscls/core/family.h"

namespace newscls {

// Names only: loads no plugin.
std::vector<std::string> known_families();
// The families whose pretrains() is true, as registered: loads no plugin (`pretrain --help`).
std::vector<std::string> pretraining_families();
// Throws UsageError for an unknown family; loads its plugin on first use.
const Family& find_family(const std::string& name);
// The family a bundle belongs to: its manifest's family "<name>" or "<name>-<kind>".
const Family& family_of_bundle(const Bundle& bundle);

// Refuses (ModelFormatError) a bundle that cannot give classes: a part for training (an
// encoder bundle) or a model without a head; each names the command that makes a classifier of it. Loading refuses only
// the first, as embed and attention use the second.
void require_classes(const Bundle& bundle);

std::unique_ptr<Classifier> make_classifier(const std::string& family);
nlohmann::json default_config(const std::string& family);
// Opens and verifies the bundle, builds its family, configures it and loads the payloads.
std::unique_ptr<Classifier> load_classifier(const std::string& dir);
std::unique_ptr<Classifier> load_classifier(const Bundle& bundle);
// Checks a bundle as loading it would, short of building the model (`newscls info`): its
// family's own check (Family::verify) and its calibration facts. ModelFormatError names the file.
void verify_bundle(const Bundle& bundle);

}  // namespace newscls
