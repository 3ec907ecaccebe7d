// The fasttext family as the registry sees it.
#include "newscls/core/family.h"
#include "fasttext/fasttext.h"

namespace newscls::fasttext {
namespace {

class FastTextFamily final : public Family {
 public:
  std::string name() const override { return "fasttext"; }
  nlohmann::json default_config() const override { return fasttext::default_config(); }
  std::unique_ptr<Classifier> make_classifier() const override { return fasttext::make_classifier(); }
};

}  // namespace

const Family& family() {
  static const FastTextFamily kFamily;
  return kFamily;
}

}  // namespace newscls::fasttext
