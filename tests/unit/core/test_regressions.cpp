// One test per fuzzer finding in core code (tests/fuzz/regressions/ keeps the inputs).
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "newscls/core/binary_io.h"
#include "newscls/core/bundle.h"
#include "newscls/core/data.h"
#include "newscls/core/error.h"
#include "newscls/core/interrupt.h"
#include "test_support.h"

namespace newscls {
namespace {

nlohmann::json manifest_with_version(const nlohmann::json& version) {
  return {{"format", kBundleFormat}, {"format_version", version},          {"family", "tfidf-rf"},
          {"labels", {"a", "b"}},    {"config", nlohmann::json::object()}, {"payloads", nlohmann::json::object()}};
}

std::string version_error(const nlohmann::json& version) {
  try {
    manifest_from_json(manifest_with_version(version), "m.json");
  } catch (const ModelFormatError& e) {
    return e.what();
  }
  return "accepted";
}

// fuzz_manifest: 4294967297 (2^32 + 1) was narrowed to int before the check and read as 1.
TEST(Regression, ManifestFormatVersionIsCheckedBeforeNarrowing) {
  EXPECT_NE(version_error(4294967297ULL), "accepted");
  EXPECT_NE(version_error(std::uint64_t{1} << 63), "accepted");
  EXPECT_NE(version_error(std::int64_t{-4294967295LL}), "accepted");
  EXPECT_NE(version_error(18446744073709551615ULL), "accepted");
  EXPECT_NE(version_error(4294967297ULL).find("version 4294967297 is not supported"), std::string::npos);
  EXPECT_EQ(version_error(1), "accepted");
}

// fuzz_bundle_open: a manifest.json holding a number too large for a double ("1e999")
// escaped Bundle::open as nlohmann's out_of_range, an error naming no file.
TEST(Regression, ManifestWithHugeNumberIsAModelFormatError) {
  const std::string dir = testing::scratch_dir();
  testing::write_text(dir + "/manifest.json", "3970e970e8e");
  try {
    Bundle::open(dir);
    FAIL() << "accepted";
  } catch (const ModelFormatError& e) {
    EXPECT_NE(std::string(e.what()).find(dir + "/manifest.json: not valid JSON"), std::string::npos) << e.what();
  }
}

// Whether thread `tid` of this process is blocked in read(2) (/proc's syscall file names the
// call a sleeping thread is in; a running one reads "running").
bool blocked_in_read(long tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/syscall");
  long call = -1;
  return (in >> call) && call == SYS_read;
}

// Runs in a death-test child: reads "abc\npartial" from a pipe whose writer stays open, and
// gets SIGINT while blocked for the rest of the second line. Exit 42 = interrupted cleanly.
[[noreturn]] void read_pipe_until_interrupted() {
  install_interrupt_handlers();
  int fds[2];
  if (::pipe(fds) != 0 || ::dup2(fds[0], 0) < 0) std::_Exit(2);
  if (::write(fds[1], "abc\npartial", 11) != 11) std::_Exit(2);
  const pthread_t reader_thread = ::pthread_self();
  const long reader_tid = ::syscall(SYS_gettid);
  std::thread([reader_thread, reader_tid] {
    // A signal before the read blocks is lost on it (the reader then waits for ever): wait for
    // the block, however busy the machine (60 s at most, for a /proc without syscall files).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!blocked_in_read(reader_tid) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::pthread_kill(reader_thread, SIGINT);
  }).detach();
  TitleReader reader("-");
  std::string title;
  if (!reader.next(title) || title != "abc") std::_Exit(3);
  try {
    reader.next(title);
  } catch (const InterruptedError&) {
    std::_Exit(42);
  } catch (const Error&) {
    std::_Exit(4);
  }
  std::_Exit(5);  // the cut line "partial" was taken for a title
}

// test_hostile_interrupt.sh: SIGINT while predict blocked on stdin gave the half-read line
// as a title, then "read failed" (exit 1) instead of an interrupted run (exit 130).
TEST(RegressionDeathTest, TitleReaderInterruptedMidLineIsNotATitle) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(read_pipe_until_interrupted(), ::testing::ExitedWithCode(42), "");
}

}  // namespace
}  // namespace newscls

#include "tfidf_rf/forest.h"

namespace newscls {
namespace {

// Fuzzer findings: a tree root past the node arrays, and a split whose child is -1 (which
// wrapped around the unsigned bounds check), made prediction read outside the nodes.
TEST(Regression, ForestPayloadsPointingOutsideTheNodesAreRefused) {
  constexpr char kMagic[4] = {'N', 'C', 'R', 'F'};
  for (const char* name : {"forest_payload-tree-root-past-end.bin", "forest_payload-negative-child.bin"}) {
    const std::string path = std::string(NEWSCLS_SOURCE_DIR) + "/tests/fuzz/regressions/" + name;
    EXPECT_THROW(
        {
          PayloadReader r(path, kMagic, tfidf_rf::RandomForest::kPayloadVersion);
          tfidf_rf::RandomForest::load(r);
        },
        ModelFormatError)
        << name;
  }
}

}  // namespace
}  // namespace newscls
