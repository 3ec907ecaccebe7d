#include "newscls/core/classifier_loader.h"

#include <mutex>
#include <stdexcept>
#include <utility>

namespace newscls {
namespace {

std::mutex& loader_mutex() {
  static std::mutex mutex;
  return mutex;
}

ClassifierLoader& installed_loader() {
  static ClassifierLoader loader;
  return loader;
}

}  // namespace

void install_classifier_loader(ClassifierLoader loader) {
  std::lock_guard<std::mutex> lock(loader_mutex());
  installed_loader() = std::move(loader);
}

std::unique_ptr<Classifier> load_member_classifier(const Bundle& bundle) {
  ClassifierLoader loader;
  {
    std::lock_guard<std::mutex> lock(loader_mutex());
    loader = installed_loader();
  }
  if (!loader) throw std::logic_error("no classifier loader installed (the registry installs it)");
  return loader(bundle);
}

}  // namespace newscls
