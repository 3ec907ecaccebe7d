# One INTERFACE target carries warnings and sanitizer flags, so no global flags are set.
add_library(newscls_warnings INTERFACE)
target_compile_options(newscls_warnings INTERFACE -Wall -Wextra -Wpedantic -Wno-unused-parameter -Wno-maybe-uninitialized)

if(NEWSCLS_SANITIZE)
  target_compile_options(newscls_warnings INTERFACE
    -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  target_link_options(newscls_warnings INTERFACE -fsanitize=address,undefined)
endif()
