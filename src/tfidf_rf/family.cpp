// The tfidf-rf family as the registry sees it.
#include "newscls/core/family.h"
#include "tfidf_rf/tfidf_rf.h"
#include "tfidf_rf/settings.h"

namespace newscls::tfidf_rf {
namespace {

class TfidfRfFamily final : public Family {
 public:
  std::string name() const override { return "tfidf-rf"; }
  const std::vector<ConfigKey>& config_keys() const override { return settings_table().keys(); }
  std::unique_ptr<Classifier> make_classifier() const override { return tfidf_rf::make_classifier(); }
};

}  // namespace

const Family& family() {
  static const TfidfRfFamily kFamily;
  return kFamily;
}

}  // namespace newscls::tfidf_rf
