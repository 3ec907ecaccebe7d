# Every dependency comes from Debian 12's archive (scripts/setup.sh installs them).
find_package(Threads REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(spdlog REQUIRED)
find_package(Torch REQUIRED)
find_package(CURL REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(OpenSSL REQUIRED)  # libcrypto: bundle checksums
find_package(PkgConfig REQUIRED)
pkg_check_modules(SENTENCEPIECE REQUIRED IMPORTED_TARGET sentencepiece)
# NFD and Unicode categories for the Hugging Face WordPiece tokenizer (src/hf).
pkg_check_modules(UTF8PROC REQUIRED IMPORTED_TARGET libutf8proc)
# cpp-httplib (libcpp-httplib-dev) for `newscls serve`; its Cflags carry the defines its
# library was built with, which every file including httplib.h must share (src/serve only).
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
# oneDNN (libdnnl-dev, the 2.6 library LibTorch itself links) for bert's int8 GEMM
# (src/bert/int8_gemm.cpp). Found by hand: its CMake package also demands OpenCL's.
find_path(DNNL_INCLUDE_DIR dnnl.hpp REQUIRED)
find_library(DNNL_LIBRARY dnnl REQUIRED)
add_library(newscls_dnnl INTERFACE IMPORTED)
target_include_directories(newscls_dnnl INTERFACE ${DNNL_INCLUDE_DIR})
target_link_libraries(newscls_dnnl INTERFACE ${DNNL_LIBRARY})
