// The fasttext family as the registry sees it.
#include "newscls/core/family.h"
#include "fasttext/fasttext.h"
#include "fasttext/settings.h"

namespace newscls::fasttext {
namespace {

class FastTextFamily final : public Family {
 public:
  std::string name() const override { return "fasttext"; }
  const std::vector<ConfigKey>& config_keys() const override { return settings_table().keys(); }
  std::unique_ptr<Classifier> make_classifier() const override { return fasttext::make_classifier(); }
};

}  // namespace

const Family& family() {
  static const FastTextFamily kFamily;
  return kFamily;
}

}  // namespace newscls::fasttext
