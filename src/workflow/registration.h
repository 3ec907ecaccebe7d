// One registered model family, as the generated registered_families.inc lists them.
#pragma once

#include "newscls/core/family.h"

namespace newscls {

struct FamilyRegistration {
  const char* name;
  const Family& (*linked)();  // a family linked into the tool, or
  const char* plugin;         // the path of the plugin that holds it
  bool pretrains;             // Family::pretrains(), known without loading a plugin
};

}  // namespace newscls
