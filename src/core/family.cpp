#include "newscls/core/family.h"

#include "newscls/core/bundle.h"
#include "newscls/core/error.h"

namespace newscls {

nlohmann::ordered_json Family::documented_config() const { return newscls::documented_config(name(), config_keys()); }

nlohmann::json Family::pretrain(const PretrainContext&) const {
  throw UsageError("model family '" + name() + "' has no encoder to pretrain");
}

nlohmann::json Family::import_checkpoint(const ImportContext& request) const {
  throw UsageError("model family '" + name() + "' cannot import " + request.format + " checkpoints");
}

nlohmann::json Family::compress(const CompressContext& request) const {
  throw UsageError("model family '" + name() + "' cannot be compressed (method " + request.method + ")");
}

// A bad config in a manifest is a fault of that file, not of the command line.
std::unique_ptr<Classifier> Family::load_checked(const Bundle& bundle) const {
  std::unique_ptr<Classifier> model = make_classifier();
  try {
    model->configure(bundle.manifest().config);
  } catch (const ConfigError& e) {
    throw ModelFormatError(manifest_path(bundle.dir()), e.what());
  }
  model->load(bundle);
  return model;
}

void Family::verify(const Bundle& bundle) const { load_checked(bundle); }

}  // namespace newscls
