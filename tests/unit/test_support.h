// Helpers for unit tests: a fresh scratch directory per test, and small file writers.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace newscls::testing {

// This process's scratch root, removed when the process ends: per process, so that two test
// runs at once (two build trees, ctest -j) never share a directory.
inline const std::filesystem::path& scratch_root() {
  struct Root {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("newscls-unit-" + std::to_string(::getpid()));
    ~Root() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Root root;
  return root.path;
}

inline std::string scratch_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::filesystem::path dir = scratch_root() / (std::string(info->test_suite_name()) + "." + info->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

inline std::string write_text(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

inline std::string source_dir() { return NEWSCLS_SOURCE_DIR; }

}  // namespace newscls::testing
