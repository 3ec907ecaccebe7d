// The cascade family as the registry sees it.
#include "cascade/cascade.h"
#include "cascade/settings.h"

namespace newscls::cascade {
namespace {

class CascadeFamily final : public Family {
 public:
  std::string name() const override { return "cascade"; }
  const std::vector<ConfigKey>& config_keys() const override { return settings_table().keys(); }
  std::unique_ptr<Classifier> make_classifier() const override { return cascade::make_classifier(); }
  std::string unavailable_reason(const nlohmann::json& config) const override {
    return cascade::unavailable_reason(config);
  }
  std::vector<std::string> trains_from(const nlohmann::json& config) const override {
    return split_members(config.value("members", std::string()));
  }
  nlohmann::json with_trains_from(nlohmann::json config, const std::vector<std::string>& bundles) const override {
    config["members"] = replace_members(config.value("members", std::string()), bundles);
    return config;
  }
  bool calibrated_by_members() const override { return true; }
  // Loading leaves the members after the first to background threads: info waits for each,
  // so a member that cannot load is found here, not by the first title that reaches it.
  void verify(const Bundle& bundle) const override { load_every_member(*load_checked(bundle)); }
};

}  // namespace

const Family& family() {
  static const CascadeFamily kFamily;
  return kFamily;
}

}  // namespace newscls::cascade
