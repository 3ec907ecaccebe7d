// Payload blocks (binary_io.h): written after zero padding to their element size, handed out
// where they lie in the file's bytes, kept alive by their arrays (even when the file is then
// rewritten in place), refused when cut or padded with anything but zeros.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "newscls/core/atomic_file.h"
#include "newscls/core/binary_io.h"
#include "newscls/core/error.h"
#include "test_support.h"

namespace newscls {
namespace {

namespace fs = std::filesystem;

std::string write_blocks(const std::string& path) {
  PayloadWriter w(path, "NCTS", 3);
  w.u8(7);                                          // offset 8: the next block pads to 12
  w.block(std::vector<std::uint32_t>{1, 2, 3});     // 12..24
  w.block("xyz", 3);                                // 24..27
  w.block(std::vector<std::uint64_t>{1ull << 40});  // padded to 32..40
  w.block(std::vector<float>(300000, 0.25f));       // a block larger than the write buffer
  w.u32(9);
  w.finish();
  return path;
}

TEST(PayloadBlocks, RoundTripAlignedWherever) {
  const std::string path = write_blocks(testing::scratch_dir() + "/p.bin");
  EXPECT_EQ(fs::file_size(path), 40u + 4 * 300000 + 4);
  const std::string bytes = read_file(path);
  EXPECT_EQ(bytes.substr(9, 3), std::string(3, '\0'));
  EXPECT_EQ(bytes.substr(27, 5), std::string(5, '\0'));
  PayloadArray<float> kept;
  {
    PayloadReader r(path, "NCTS", 3);
    EXPECT_EQ(r.u8(), 7);
    const PayloadArray<std::uint32_t> a = r.block<std::uint32_t>(3);
    EXPECT_EQ(a.to_vector(), (std::vector<std::uint32_t>{1, 2, 3}));
    EXPECT_EQ(std::string(r.block<char>(3).data(), 3), "xyz");
    const PayloadArray<std::uint64_t> b = r.block<std::uint64_t>(1);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % 8, 0u);
    EXPECT_EQ(b[0], 1ull << 40);
    kept = r.block<float>(300000);
    EXPECT_EQ(r.u32(), 9u);
    r.expect_end();
  }
  // The reader is gone, and the file is cut in place (as `cp` over it does): the array keeps the
  // bytes it was read with.
  std::FILE* cut = std::fopen(path.c_str(), "wb");
  ASSERT_NE(cut, nullptr);
  std::fputs("cut", cut);
  std::fclose(cut);
  ASSERT_EQ(kept.size(), 300000u);
  EXPECT_EQ(kept[0], 0.25f);
  EXPECT_EQ(kept[299999], 0.25f);
}

TEST(PayloadBlocks, EmptyBlocksTakeNoBytes) {
  const std::string path = testing::scratch_dir() + "/e.bin";
  PayloadWriter w(path, "NCTS", 1);
  w.block(std::vector<float>{});
  w.u8(1);
  w.block(std::vector<std::uint8_t>{});
  w.finish();
  PayloadReader r(path, "NCTS", 1);
  EXPECT_TRUE(r.block<float>(0).empty());
  EXPECT_EQ(r.u8(), 1);
  EXPECT_TRUE(r.block<std::uint8_t>(0).empty());
  r.expect_end();
}

TEST(PayloadBlocks, CutBlocksHugeCountsAndDirtyPaddingAreRefused) {
  const std::string dir = testing::scratch_dir();
  const std::string bytes = read_file(write_blocks(dir + "/p.bin"));
  const auto read_all = [](const std::string& path) {
    PayloadReader r(path, "NCTS", 3);
    r.u8();
    r.block<std::uint32_t>(3);
    r.block<char>(3);
    r.block<std::uint64_t>(1);
    r.block<float>(300000);
    r.u32();
    r.expect_end();
  };
  for (const std::size_t cut : {10u, 14u, 26u, 30u, 36u, 50u, 1200000u, 1200043u}) {
    testing::write_text(dir + "/cut.bin", bytes.substr(0, cut));
    EXPECT_THROW(read_all(dir + "/cut.bin"), ModelFormatError) << cut;
  }
  std::string dirty = bytes;
  dirty[29] = 1;
  testing::write_text(dir + "/dirty.bin", dirty);
  try {
    read_all(dir + "/dirty.bin");
    ADD_FAILURE() << "loaded";
  } catch (const ModelFormatError& e) {
    EXPECT_NE(std::string(e.what()).find("non-zero padding at offset 27"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(dir + "/dirty.bin"), std::string::npos) << e.what();
  }
  PayloadReader r(dir + "/p.bin", "NCTS", 3);
  r.u8();
  EXPECT_THROW(r.block<float>(std::uint64_t{1} << 62), ModelFormatError);  // n * 4 would wrap
  EXPECT_THROW(r.block<std::uint64_t>(~std::uint64_t{0}), ModelFormatError);
}

TEST(PayloadBlocks, AnArrayOwnsAVectorOrSharesABlock) {
  const PayloadArray<int> owned(std::vector<int>{4, 5});
  const PayloadArray<int> copy = owned;  // shares the elements
  EXPECT_EQ(copy.data(), owned.data());
  EXPECT_EQ(copy.to_vector(), (std::vector<int>{4, 5}));
  EXPECT_TRUE(PayloadArray<int>().empty());
}

TEST(PayloadBlocks, OffsetsDelimitStringsOnlyInsideTheirBytes) {
  using Offsets = std::vector<std::uint32_t>;
  EXPECT_TRUE(offsets_delimit(Offsets{0}, 0));
  EXPECT_TRUE(offsets_delimit(Offsets{0, 1, 1, 4}, 4));
  EXPECT_FALSE(offsets_delimit(Offsets{}, 0));
  EXPECT_FALSE(offsets_delimit(Offsets{1, 4}, 4));        // not from 0
  EXPECT_FALSE(offsets_delimit(Offsets{0, 3}, 4));        // not to the end
  EXPECT_FALSE(offsets_delimit(Offsets{0, 9, 2, 4}, 4));  // past the bytes, then back
}

TEST(PayloadBlocks, EmptyAndMissingFilesAreCleanErrors) {
  const std::string path = testing::scratch_dir() + "/empty.bin";
  testing::write_text(path, "");
  EXPECT_THROW(PayloadReader(path, "NCTS", 1), ModelFormatError);
  EXPECT_THROW(PayloadReader(testing::scratch_dir() + "/missing.bin", "NCTS", 1), IoError);
}

}  // namespace
}  // namespace newscls
