// The entry point of libnewscls_bert.so: the registry loads the plugin on first use of the
// family, so that only commands that use bert start LibTorch.
#include "bert/bert.h"

extern "C" __attribute__((visibility("default"))) const newscls::Family* newscls_family() {
  return &newscls::bert::family();
}
