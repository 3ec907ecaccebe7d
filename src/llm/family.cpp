// The llm family as the registry sees it: it can run only where the client finds an API key
// (or the server needs none).
#include "newscls/core/family.h"
#include "llm/api_key.h"
#include "llm/llm.h"
#include "llm/settings.h"

namespace newscls::llm {
namespace {

class LlmFamily final : public Family {
 public:
  std::string name() const override { return "llm"; }
  bool pays_per_prediction() const override { return true; }
  const std::vector<ConfigKey>& config_keys() const override { return settings_table().keys(); }
  std::unique_ptr<Classifier> make_classifier() const override { return llm::make_classifier(); }
  std::string unavailable_reason(const nlohmann::json& config) const override {
    return llm::unavailable_reason(config);
  }
};

}  // namespace

const Family& family() {
  static const LlmFamily kFamily;
  return kFamily;
}

}  // namespace newscls::llm
