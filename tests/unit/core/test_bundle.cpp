#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <fstream>
#include <functional>
#include <thread>

#include "newscls/core/atomic_file.h"
#include "newscls/core/binary_io.h"
#include "newscls/core/bundle.h"
#include "newscls/core/bundle_files.h"
#include "newscls/core/error.h"
#include "newscls/core/interrupt.h"
#include "newscls/core/sha256.h"
#include "test_support.h"

namespace newscls {
namespace {

namespace fs = std::filesystem;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

Manifest sample_manifest() {
  Manifest m;
  m.family = "tfidf-rf";
  m.labels = {"a", "b"};
  m.config = {{"n_trees", 3}};
  return m;
}

std::string write_sample_bundle(const std::string& dir) {
  BundleWriter w(dir);
  PayloadWriter p(w.payload_path("weights.bin"), "NCTS", 1);
  p.u32(7);
  p.f32_array(std::vector<float>{1.5f, -2.0f});
  p.str("héllo");
  p.finish();
  w.commit(sample_manifest());
  return dir;
}

// Runs in a death-test child: a SIGINT after a bundle's and a file set's files are written,
// before their commit. Exit 42: both refused, the earlier bundle and file kept, nothing left.
[[noreturn]] void commit_after_interrupt(const std::string& dir) {
  install_interrupt_handlers();
  BundleWriter w(dir + "/model");
  PayloadWriter(w.payload_path("weights.bin"), "NCTS", 1).finish();
  AtomicFileSet files;
  files.add(dir + "/metrics.json", "new");
  std::raise(SIGINT);
  int refused = 0;
  try {
    w.commit(sample_manifest());
  } catch (const InterruptedError&) {
    ++refused;
  }
  try {
    files.commit();
  } catch (const InterruptedError&) {
    ++refused;
  }
  std::_Exit(refused == 2 && read_file(dir + "/metrics.json") == "old" ? 42 : 3);
}

// Ctrl-C while train or eval wrote their files replaced the bundle (or metrics) all the same,
// exit 0: the signal was looked at only during the work.
TEST(BundleDeathTest, CommitAfterAnInterruptKeepsWhatWasThere) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string dir = testing::scratch_dir();
  write_sample_bundle(dir + "/model");
  testing::write_text(dir + "/metrics.json", "old");
  const std::string manifest_before = read_file(dir + "/model/manifest.json");
  EXPECT_EXIT(commit_after_interrupt(dir), ::testing::ExitedWithCode(42), "");
  EXPECT_EQ(read_file(dir + "/model/manifest.json"), manifest_before);
  EXPECT_EQ(read_file(dir + "/metrics.json"), "old");
  for (const auto& entry : fs::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos) << entry.path();
  }
}

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Payload, RoundTripsFieldsLittleEndian) {
  const std::string dir = testing::scratch_dir();
  PayloadWriter w(dir + "/p.bin", "NCTS", 2);
  w.u32(0x01020304);
  w.f64(3.25);
  w.i32_array({-1, 5});
  w.finish();
  const std::string bytes = read_file(dir + "/p.bin");
  EXPECT_EQ(bytes.substr(0, 4), "NCTS");
  EXPECT_EQ(bytes[8], '\x04');  // least significant byte first
  PayloadReader r(dir + "/p.bin", "NCTS", 2);
  EXPECT_EQ(r.u32(), 0x01020304u);
  EXPECT_EQ(r.f64(), 3.25);
  EXPECT_EQ(r.i32_array(), (std::vector<std::int32_t>{-1, 5}));
  r.expect_end();
}

TEST(Payload, RefusesNewerVersionNamingBoth) {
  const std::string dir = testing::scratch_dir();
  PayloadWriter w(dir + "/p.bin", "NCTS", 9);
  w.finish();
  const std::string message = error_of([&] { PayloadReader(dir + "/p.bin", "NCTS", 2); });
  EXPECT_TRUE(contains(message, "version 9")) << message;
  EXPECT_TRUE(contains(message, "(2)")) << message;
}

TEST(Payload, TruncatedFileAndHugeCountsAreCleanErrors) {
  const std::string dir = testing::scratch_dir();
  PayloadWriter w(dir + "/p.bin", "NCTS", 1);
  w.f32_array(std::vector<float>(100, 1.0f));
  w.finish();
  fs::resize_file(dir + "/p.bin", 100);
  PayloadReader r(dir + "/p.bin", "NCTS", 1);
  EXPECT_THROW(r.f32_array(), ModelFormatError);
  EXPECT_THROW(PayloadReader(testing::write_text(dir + "/x.bin", "NC"), "NCTS", 1), ModelFormatError);
}

TEST(Bundle, WritesAtomicallyAndVerifiesOnOpen) {
  const std::string dir = write_sample_bundle(testing::scratch_dir() + "/model");
  const Bundle b = Bundle::open(dir);
  EXPECT_EQ(b.manifest().family, "tfidf-rf");
  EXPECT_EQ(b.manifest().labels, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(b.manifest().config["n_trees"], 3);
  PayloadReader r(b.payload_path("weights.bin"), "NCTS", 1);
  EXPECT_EQ(r.u32(), 7u);
  EXPECT_EQ(r.f32_array(), (std::vector<float>{1.5f, -2.0f}));
  EXPECT_EQ(r.str(), "héllo");
  for (const auto& entry : fs::directory_iterator(fs::path(dir).parent_path())) {
    EXPECT_EQ(entry.path().filename(), "model") << "left behind: " << entry.path();
  }
}

TEST(Bundle, ReplacesAnOlderBundleButNotOtherDirectories) {
  const std::string root = testing::scratch_dir();
  write_sample_bundle(root + "/model");
  write_sample_bundle(root + "/model");
  EXPECT_NO_THROW(Bundle::open(root + "/model"));
  testing::write_text(root + "/precious.txt", "x");
  EXPECT_THROW(BundleWriter w(root), IoError);
  EXPECT_TRUE(fs::exists(root + "/precious.txt"));
}

TEST(Bundle, UncommittedWriterLeavesNothing) {
  const std::string root = testing::scratch_dir();
  {
    BundleWriter w(root + "/model");
    testing::write_text(w.payload_path("a.bin"), "x");
  }
  EXPECT_TRUE(fs::is_empty(root));
}

TEST(Bundle, RefusesBadChecksumMissingPayloadNewerVersionAndBadManifest) {
  const std::string root = testing::scratch_dir();
  const std::string dir = write_sample_bundle(root + "/model");
  {
    std::fstream f(dir + "/weights.bin", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(10);
    f.put('\x7f');
  }
  EXPECT_TRUE(contains(error_of([&] { Bundle::open(dir); }), "checksum mismatch"));

  write_sample_bundle(dir);
  fs::remove(dir + "/weights.bin");
  EXPECT_TRUE(contains(error_of([&] { Bundle::open(dir); }), "missing"));

  write_sample_bundle(dir);
  nlohmann::json j = nlohmann::json::parse(read_file(dir + "/manifest.json"));
  j["format_version"] = kBundleFormatVersion + 1;
  write_file_atomic(dir + "/manifest.json", j.dump());
  const std::string newer = error_of([&] { Bundle::open(dir); });
  EXPECT_TRUE(contains(newer, "version " + std::to_string(kBundleFormatVersion + 1))) << newer;
  EXPECT_TRUE(contains(newer, "1.." + std::to_string(kBundleFormatVersion))) << newer;

  j["format_version"] = "one";
  write_file_atomic(dir + "/manifest.json", j.dump());
  EXPECT_TRUE(contains(error_of([&] { Bundle::open(dir); }), "wrong type"));
  j.erase("labels");
  j["format_version"] = 1;
  write_file_atomic(dir + "/manifest.json", j.dump());
  EXPECT_TRUE(contains(error_of([&] { Bundle::open(dir); }), "no 'labels'"));
  j["labels"] = {"a", "b"};
  j["payloads"] = {{"../escape", {{"sha256", "00"}}}};
  write_file_atomic(dir + "/manifest.json", j.dump());
  EXPECT_TRUE(contains(error_of([&] { Bundle::open(dir); }), "bad payload name"));
}

// The one rule for a dump's files, which the bundle's checks and the dump share.
TEST(Bundle, DumpFileIndexNamesOnlyWhatADumpWrites) {
  EXPECT_EQ(dump_file_index("12.npy"), std::optional<std::size_t>(12));
  EXPECT_EQ(dump_file_index("0.json"), std::optional<std::size_t>(0));
  EXPECT_EQ(dump_file_index("7.html"), std::optional<std::size_t>(7));
  for (const char* other : {"012.json", "x.json", "12.txt", "dumps.json", ".json", "1.2.json", "12"}) {
    EXPECT_FALSE(dump_file_index(other).has_value()) << other;
  }
  // The dump's own, by its index's title count: a title file beyond it is someone else's.
  EXPECT_TRUE(is_dump_entry("2.json", 3));
  EXPECT_FALSE(is_dump_entry("3.json", 3));
  EXPECT_TRUE(is_dump_entry("dumps.json", 0));
  EXPECT_TRUE(is_dump_entry(".dumping.4242", 0));
  EXPECT_FALSE(is_dump_entry(".dumping.mine", 0));
}

// The bundle a path lies in, at any depth, its own folder included; another program's
// manifest.json is an ordinary file.
TEST(Bundle, BundleHoldingFindsTheNearestNewsclsBundle) {
  const std::string root = testing::scratch_dir();
  const std::string outer = write_sample_bundle(root + "/outer");
  const std::string inner = write_sample_bundle(root + "/inner");  // a writer refuses to write inside a bundle
  fs::create_directories(outer + "/members");
  fs::rename(inner, outer + "/members/1");
  EXPECT_EQ(bundle_holding(outer), fs::canonical(outer).string());
  EXPECT_EQ(bundle_holding(outer + "/attention/new"), fs::canonical(outer).string());
  EXPECT_EQ(bundle_holding(outer + "/members/1/x"), fs::canonical(outer + "/members/1").string());
  EXPECT_EQ(bundle_holding(root + "/elsewhere"), "");
  fs::create_directories(root + "/other");
  testing::write_text(root + "/other/manifest.json", R"({"name": "not ours"})");
  EXPECT_EQ(bundle_holding(root + "/other/sub"), "");
}

TEST(AtomicFile, FoldersOverlapHoweverSpelt) {
  const std::string dir = testing::scratch_dir();
  std::filesystem::create_directories(dir + "/model");
  std::filesystem::create_symlink(dir + "/model", dir + "/link");
  EXPECT_TRUE(folders_overlap(dir + "/model", dir + "/model/"));
  EXPECT_TRUE(folders_overlap(dir + "/model", dir + "/./x/../model"));
  EXPECT_TRUE(folders_overlap(dir + "/link", dir + "/model"));
  EXPECT_TRUE(folders_overlap(dir + "/model", dir + "/model/sub/new"));
  EXPECT_TRUE(folders_overlap(dir, dir + "/model"));
  EXPECT_FALSE(folders_overlap(dir + "/model", dir + "/model2"));
  EXPECT_FALSE(folders_overlap(dir + "/model", dir + "/other"));
}

TEST(AtomicFile, PidInNameReadsOnlyAStagingFoldersName) {
  EXPECT_EQ(pid_in_name(".dumping.4242", ".dumping"), 4242);
  EXPECT_EQ(pid_in_name(".dumping.", ".dumping"), 0);
  EXPECT_EQ(pid_in_name(".dumping.42x", ".dumping"), 0);
  EXPECT_EQ(pid_in_name(".dumping42", ".dumping"), 0);
  EXPECT_EQ(pid_in_name(".dumping.mine", ".dumping"), 0);
  EXPECT_EQ(pid_in_name(".dumping.1234567890", ".dumping"), 0);  // no pid has ten digits
  EXPECT_EQ(pid_in_name("x.dumping.42", ".dumping"), 0);
}

TEST(AtomicFile, InterruptedWriteKeepsThePreviousContent) {
  const std::string path = testing::scratch_dir() + "/metrics.json";
  write_file_atomic(path, "old");
  {
    AtomicOutputFile out(path);
    out.write("new but unfinished");
  }
  EXPECT_EQ(read_file(path), "old");
  EXPECT_EQ(std::distance(fs::directory_iterator(fs::path(path).parent_path()), fs::directory_iterator()), 1);
}

TEST(AtomicFile, ASetIsPutInPlaceOnlyWhenEveryFileIsWritten) {
  const std::string dir = testing::scratch_dir();
  write_file_atomic(dir + "/predictions.tsv", "old");
  {
    AtomicFileSet files;
    files.add(dir + "/predictions.tsv", "new");
    EXPECT_THROW(files.add(dir + "/no/such/folder/metrics.json", "new"), IoError);
  }
  EXPECT_EQ(read_file(dir + "/predictions.tsv"), "old");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);  // no temporary file left
  AtomicFileSet files;
  files.add(dir + "/predictions.tsv", "new");
  files.add(dir + "/metrics.json", "new");
  files.commit();
  EXPECT_EQ(read_file(dir + "/predictions.tsv") + read_file(dir + "/metrics.json"), "newnew");
}

TEST(AtomicFile, ANameTooLongForTheTemporarySuffixIsWritten) {
  const std::string dir = testing::scratch_dir();
  const std::string path = dir + "/" + std::string(250, 'a');
  write_file_atomic(path, "long");
  EXPECT_EQ(read_file(path), "long");
  EXPECT_LE(fs::path(temp_path_for(path)).filename().string().size(), 255u);
  EXPECT_EQ(temp_path_for(dir + "/m.json"), dir + "/m.json.tmp." + std::to_string(::getpid()));
}

// What arrives through a FIFO until its writer closes it; "" when no writer comes within 10 s.
std::string read_fifo(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK);  // does not wait for a writer
  std::string out;
  pollfd p{fd, POLLIN, 0};
  char buf[256];
  while (fd >= 0 && ::poll(&p, 1, 10000) > 0) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) out.append(buf, static_cast<std::size_t>(n));
    if (n == 0) break;  // the writer closed
  }
  if (fd >= 0) ::close(fd);
  return out;
}

TEST(AtomicFile, AFifoIsWrittenInPlaceNotReplaced) {
  // As for /dev/null or /dev/stdout: a rename would put a regular file where the device was.
  const std::string path = testing::scratch_dir() + "/pipe";
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0) << std::strerror(errno);
  std::string got;
  std::thread reader([&] { got = read_fifo(path); });
  write_file_atomic(path, "through the pipe\n");
  reader.join();
  EXPECT_EQ(got, "through the pipe\n");
  EXPECT_TRUE(fs::is_fifo(path));
  EXPECT_EQ(std::distance(fs::directory_iterator(fs::path(path).parent_path()), fs::directory_iterator()), 1);
}

TEST(AtomicFile, ALinkKeepsPointingAtItsReplacedFile) {
  const std::string dir = testing::scratch_dir();
  write_file_atomic(dir + "/target.json", "old");
  fs::create_symlink("target.json", dir + "/link.json");
  write_file_atomic(dir + "/link.json", "new");
  EXPECT_TRUE(fs::is_symlink(dir + "/link.json"));
  EXPECT_EQ(read_file(dir + "/target.json"), "new");
}

// Saving again keeps the file's permissions: a private (600) output became world-readable.
TEST(AtomicFile, AReplacedFileKeepsItsPermissions) {
  const std::string dir = testing::scratch_dir();
  write_file_atomic(dir + "/private.jsonl", "old");
  fs::permissions(dir + "/private.jsonl", fs::perms::owner_read | fs::perms::owner_write);
  write_file_atomic(dir + "/private.jsonl", "new");
  EXPECT_EQ(read_file(dir + "/private.jsonl"), "new");
  EXPECT_EQ(fs::status(dir + "/private.jsonl").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
}

TEST(AtomicFile, ADanglingLinkGetsItsFileCreated) {
  const std::string dir = testing::scratch_dir();
  fs::create_symlink("later.tsv", dir + "/link.tsv");
  write_file_atomic(dir + "/link.tsv", "new");
  EXPECT_TRUE(fs::is_symlink(dir + "/link.tsv"));
  EXPECT_EQ(read_file(dir + "/later.tsv"), "new");
}

TEST(AtomicFile, AnOpenStreamIsAppendedToNotReplaced) {
  // --output /dev/stderr with 2>>run.log: /dev/fd/N is a link into /proc to the open file.
  const std::string log = testing::write_text(testing::scratch_dir() + "/run.log", "precious\n");
  const int fd = ::open(log.c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(fd, 0);
  const auto inode = fs::status(log).type();
  write_file_atomic("/dev/fd/" + std::to_string(fd), "result\n");
  ::close(fd);
  EXPECT_EQ(read_file(log), "precious\nresult\n");
  EXPECT_EQ(fs::status(log).type(), inode);
  EXPECT_EQ(std::distance(fs::directory_iterator(fs::path(log).parent_path()), fs::directory_iterator()), 1);
}

// One rule for "is this output a stream?", used by eval to decide whether it has a folder to
// write its other files into.
TEST(AtomicFile, WrittenInPlaceAreStreamsAndDevicesOnly) {
  const std::string dir = testing::scratch_dir();
  const std::string file = testing::write_text(dir + "/metrics.json", "{}");
  for (const std::string path : {"-", "/dev/null", "/dev/stdout", "/dev/fd/2", "/proc/self/fd/1"}) {
    EXPECT_TRUE(written_in_place(path)) << path;
  }
  for (const std::string& path : {file, dir, dir + "/absent.json", dir + "/"})
    EXPECT_FALSE(written_in_place(path)) << path;
  EXPECT_EQ(without_trailing_slashes("runs/x//"), "runs/x");
  EXPECT_EQ(without_trailing_slashes("/"), "/");
}

TEST(AtomicFile, ADirectoryIsRefused) {
  const std::string dir = testing::scratch_dir();
  EXPECT_NE(error_of([&] { write_file_atomic(dir, "x"); }).find("is a directory"), std::string::npos);
}

TEST(AtomicFile, FailedDirectoryReplaceRestoresTheOldOneAndKeepsTheRenameError) {
  const std::string root = testing::scratch_dir();
  const std::string dir = write_sample_bundle(root + "/model");
  // The old directory is moved aside, then the rename of the new one fails (there is none):
  // the error must be that rename's, not the successful move back's.
  const std::string why = error_of([&] { replace_directory(root + "/vanished", dir); });
  EXPECT_TRUE(contains(why, std::strerror(ENOENT))) << why;
  EXPECT_TRUE(contains(why, dir)) << why;
  EXPECT_FALSE(contains(why, "Success")) << why;
  EXPECT_NO_THROW(Bundle::open(dir)) << "the previous bundle is back under its name";
  EXPECT_EQ(std::distance(fs::directory_iterator(root), fs::directory_iterator()), 1);
}

TEST(AtomicFile, SyncTreeSyncsAndNamesWhatItCannotOpen) {
  const std::string root = testing::scratch_dir();
  write_sample_bundle(root + "/model");
  EXPECT_NO_THROW(sync_tree(root + "/model"));
  EXPECT_NO_THROW(sync_path(root + "/model/manifest.json"));
  const std::string why = error_of([&] { sync_path(root + "/absent"); });
  EXPECT_TRUE(contains(why, root + "/absent")) << why;
  EXPECT_TRUE(contains(why, std::strerror(ENOENT))) << why;
}

}  // namespace
}  // namespace newscls
