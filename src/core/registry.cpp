// The family factory: the only place that knows every model family.
#include <functional>
#include <utility>
#include <vector>

#include "bert/bert.h"
#include "fasttext/fasttext.h"
#include "llm/llm.h"
#include "newscls/classifier.h"
#include "newscls/error.h"
#include "tfidf_rf/tfidf_rf.h"

namespace newscls {
namespace {

struct Family {
  std::function<std::unique_ptr<Classifier>()> make;
  std::function<nlohmann::json()> defaults;
};

// In order of cost and power: the order the pipeline runs them in.
const std::vector<std::pair<std::string, Family>>& families() {
  static const std::vector<std::pair<std::string, Family>> kFamilies = {
      {"tfidf-rf", {tfidf_rf::make_classifier, tfidf_rf::default_config}},
      {"fasttext", {fasttext::make_classifier, fasttext::default_config}},
      {"bert", {bert::make_classifier, bert::default_config}},
      {"llm", {llm::make_classifier, llm::default_config}},
  };
  return kFamilies;
}

const Family& find_family(const std::string& name) {
  for (const auto& [family_name, family] : families()) {
    if (family_name == name) return family;
  }
  std::string known;
  for (const auto& entry : families()) known += (known.empty() ? "" : ", ") + entry.first;
  throw UsageError("unknown model family '" + name + "' (known: " + known + ")");
}

}  // namespace

std::vector<std::string> known_families() {
  std::vector<std::string> names;
  for (const auto& entry : families()) names.push_back(entry.first);
  return names;
}

std::unique_ptr<Classifier> make_classifier(const std::string& family) {
  return find_family(family).make();
}

nlohmann::json default_config(const std::string& family) { return find_family(family).defaults(); }

std::unique_ptr<Classifier> load_classifier(const std::string& dir) { return load_classifier(Bundle::open(dir)); }

// A bad family or config in a manifest is a fault of that file, not of the command line.
std::unique_ptr<Classifier> load_classifier(const Bundle& bundle) {
  const std::string manifest_path = bundle.dir() + "/manifest.json";
  std::unique_ptr<Classifier> model;
  try {
    model = make_classifier(bundle.manifest().family);
    model->configure(bundle.manifest().config);
  } catch (const UsageError& e) {
    throw ModelFormatError(manifest_path, e.what());
  } catch (const ConfigError& e) {
    throw ModelFormatError(manifest_path, e.what());
  }
  model->load(bundle);
  return model;
}

void Classifier::dump_attention(const std::vector<std::string>&, std::size_t, const std::string&) {
  throw UsageError("model family '" + family() + "' has no attention weights to dump");
}

}  // namespace newscls
