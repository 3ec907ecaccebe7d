# Model families register themselves here; src/workflow generates the registry from the
# registrations, in the order the family folders were added (the pipeline's order).
#
#   newscls_register_family(NAME fasttext LIBRARY newscls_fasttext ENTRY newscls::fasttext::family)
#   newscls_register_family(NAME bert LIBRARY newscls_bert PLUGIN newscls_bert_plugin PRETRAINS)
#
# LIBRARY is the family's static library, linked into the tool and into newscls_unit_tests
# unless PLUGIN is given; a plugin family's library goes into newscls_plugin_unit_tests with
# the tests in tests/unit/<NAME, '-' as '_'>/, so the other unit tests start without LibTorch. ENTRY is a function `const newscls::Family& f()`
# in it. A PLUGIN family is a MODULE library exporting `extern "C" const newscls::Family*
# newscls_family()`, loaded on first use, so the tool does not start LibTorch for the others.
# PRETRAINS says the family's pretrains() is true, so `pretrain --help` can list the families
# that pretrain without loading a plugin; the registry checks it when it loads the family.
function(newscls_register_family)
  cmake_parse_arguments(F "PRETRAINS" "NAME;LIBRARY;ENTRY;PLUGIN" "" ${ARGN})
  if(NOT F_NAME OR NOT F_LIBRARY OR (NOT F_ENTRY AND NOT F_PLUGIN))
    message(FATAL_ERROR "newscls_register_family needs NAME, LIBRARY and ENTRY or PLUGIN")
  endif()
  set(pretrains false)
  if(F_PRETRAINS)
    set(pretrains true)
  endif()
  if(F_PLUGIN)
    set_property(GLOBAL APPEND PROPERTY NEWSCLS_FAMILY_PLUGINS ${F_PLUGIN})
    set_property(GLOBAL APPEND PROPERTY NEWSCLS_FAMILY_PLUGIN_LIBRARIES ${F_LIBRARY})
    set_property(GLOBAL APPEND PROPERTY NEWSCLS_FAMILY_PLUGIN_NAMES ${F_NAME})
    set_property(GLOBAL APPEND_STRING PROPERTY NEWSCLS_FAMILY_ENTRIES
      "    {\"${F_NAME}\", nullptr, \"$<TARGET_FILE:${F_PLUGIN}>\", ${pretrains}},\n")
  else()
    set_property(GLOBAL APPEND PROPERTY NEWSCLS_FAMILY_LINKED ${F_LIBRARY})
    string(REGEX REPLACE "::[^:]+$" "" ns "${F_ENTRY}")
    string(REGEX REPLACE "^.*::" "" fn "${F_ENTRY}")
    set_property(GLOBAL APPEND_STRING PROPERTY NEWSCLS_FAMILY_DECLARATIONS
      "namespace ${ns} { const newscls::Family& ${fn}(); }\n")
    set_property(GLOBAL APPEND_STRING PROPERTY NEWSCLS_FAMILY_ENTRIES
      "    {\"${F_NAME}\", &${F_ENTRY}, \"\", ${pretrains}},\n")
  endif()
endfunction()
