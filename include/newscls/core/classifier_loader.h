// How a family made of other families' bundles (the cascade) opens its members without
// linking the registry above it: core holds one loader, which the registry (workflow)
// installs before it builds any family's classifier. The loader gives what load_classifier
// gives: the bundle's classifier with its calibration applied.
//
//   install_classifier_loader([](const Bundle& b) { return load_classifier(b); });  // the registry
//   std::unique_ptr<Classifier> member = load_member_classifier(Bundle::open(dir));  // a cascade
#pragma once

#include <functional>
#include <memory>

#include "newscls/core/bundle.h"
#include "newscls/core/classifier.h"

namespace newscls {

using ClassifierLoader = std::function<std::unique_ptr<Classifier>(const Bundle& bundle)>;

// Process-wide, like the interrupt flag: set once by the registry, read by the cascade.
void install_classifier_loader(ClassifierLoader loader);
// std::logic_error when no loader was installed (a classifier built without the registry).
std::unique_ptr<Classifier> load_member_classifier(const Bundle& bundle);

}  // namespace newscls
