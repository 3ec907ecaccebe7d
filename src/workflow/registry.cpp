// The family registry, built from the newscls_register_family() calls of the family folders
// (cmake/NewsclsFamilies.cmake generates registered_families.inc).
#include "newscls/workflow/registry.h"

#include <mutex>
#include <stdexcept>
#include <unordered_map>

#include "newscls/core/bundle.h"
#include "newscls/core/classifier_loader.h"
#include "newscls/core/error.h"
#include "registered_families.inc"
#include "workflow/calibration.h"
#include "workflow/plugin_loader.h"

namespace newscls {
namespace {

using Registration = FamilyRegistration;
constexpr const auto& kRegistrations = kRegisteredFamilies;

const Registration& find_registration(const std::string& name) {
  for (const Registration& r : kRegistrations) {
    if (name == r.name) return r;
  }
  std::string known;
  for (const Registration& r : kRegistrations) known += (known.empty() ? "" : ", ") + std::string(r.name);
  throw UsageError("unknown model family '" + name + "' (known: " + known + ")");
}

// The help lists the families that pretrain from their registrations, so a registration
// that disagrees with its family would offer a value that is then refused, or hide one.
const Family& agreeing_with_registration(const Registration& r, const Family& family) {
  if (family.pretrains() != r.pretrains) {
    throw std::logic_error(std::string("family '") + r.name + "' is registered " + (r.pretrains ? "with" : "without") +
                           " PRETRAINS, but its pretrains() says " + (family.pretrains() ? "true" : "false"));
  }
  return family;
}

}  // namespace

std::vector<std::string> known_families() {
  std::vector<std::string> names;
  for (const Registration& r : kRegistrations) names.emplace_back(r.name);
  return names;
}

std::vector<std::string> pretraining_families() {
  std::vector<std::string> names;
  for (const Registration& r : kRegistrations) {
    if (r.pretrains) names.emplace_back(r.name);
  }
  return names;
}

namespace {

// Every classifier is built through find_family, so the cascade finds the loader installed
// before it opens a member.
void install_loader_once() {
  static const bool installed = [] {
    install_classifier_loader([](const Bundle& bundle) { return load_classifier(bundle); });
    return true;
  }();
  (void)installed;
}

}  // namespace

const Family& find_family(const std::string& name) {
  install_loader_once();
  const Registration& r = find_registration(name);
  if (r.linked != nullptr) return agreeing_with_registration(r, r.linked());
  static std::mutex mutex;
  static std::unordered_map<std::string, const Family*> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  const Family*& family = loaded[name];
  if (family == nullptr) family = &agreeing_with_registration(r, load_family_plugin(r.name, r.plugin));
  return *family;
}

const Family& family_of_bundle(const Bundle& bundle) {
  const std::string& kind = bundle.manifest().family;
  try {
    for (const Registration& r : kRegistrations) {
      const std::string name = r.name;
      if (kind == name || kind.rfind(name + "-", 0) == 0) return find_family(name);
    }
    return find_family(kind);  // throws, listing the known families
  } catch (const UsageError& e) {
    throw ModelFormatError(manifest_path(bundle.dir()), e.what());
  }
}

std::unique_ptr<Classifier> make_classifier(const std::string& family) { return find_family(family).make_classifier(); }

nlohmann::json default_config(const std::string& family) { return find_family(family).default_config(); }

std::unique_ptr<Classifier> load_classifier(const std::string& dir) { return load_classifier(Bundle::open(dir)); }

// A bundle's calibration, when it has one, applies to every use of the bundle (eval, predict,
// the members of a cascade).
std::unique_ptr<Classifier> load_classifier(const Bundle& bundle) {
  std::unique_ptr<Classifier> model = load_uncalibrated_classifier(bundle);
  Temperature t;
  if (bundle_temperature(bundle, t)) return with_temperature(std::move(model), t);
  return model;
}

void verify_bundle(const Bundle& bundle) {
  family_of_bundle(bundle).verify(bundle);
  Temperature t;
  bundle_temperature(bundle, t);
}

namespace {

void require_model_kind(const Bundle& bundle, const Family& family) {
  const std::string& kind = bundle.manifest().family;
  if (kind == family.name()) return;
  // A part for training (an encoder), not a model.
  const std::string fix = family.trains_from_init() ? "; train a classifier from it: newscls train --model " +
                                                          family.name() + " --init " + bundle.dir()
                                                    : "";
  throw ModelFormatError(manifest_path(bundle.dir()),
                         "a '" + kind + "' bundle cannot classify, embed or show attention" + fix);
}

}  // namespace

void require_classes(const Bundle& bundle) {
  const Family& family = family_of_bundle(bundle);
  require_model_kind(bundle, family);
  // A fault of the bundle, exit 1, as predict and eval say it.
  if (const std::string why = family.without_classes(bundle); !why.empty()) throw ModelFormatError(bundle.dir(), why);
}

// A bad family or config in a manifest is a fault of that file, not of the command line.
std::unique_ptr<Classifier> load_uncalibrated_classifier(const Bundle& bundle) {
  const Family& family = family_of_bundle(bundle);
  require_model_kind(bundle, family);
  std::unique_ptr<Classifier> model = family.make_classifier();
  try {
    model->configure(bundle.manifest().config);
  } catch (const ConfigError& e) {
    throw ModelFormatError(manifest_path(bundle.dir()), e.what());
  }
  model->load(bundle);
  return model;
}

}  // namespace newscls
