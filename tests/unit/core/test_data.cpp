#include <gtest/gtest.h>

#include "newscls/core/data.h"
#include "newscls/core/error.h"
#include "test_support.h"

namespace newscls {
namespace {

using testing::scratch_dir;
using testing::write_text;

std::string data_error_message(const std::string& path, int num_labels) {
  try {
    read_labeled_file(path, num_labels, {});
  } catch (const DataError& e) {
    return e.what();
  }
  return "no error";
}

TEST(DataReader, SplitFieldsKeepsEmptyFields) {
  EXPECT_EQ(split_fields("a,,b", ','), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_EQ(split_fields("", '\t'), (std::vector<std::string>{""}));
  EXPECT_EQ(split_fields("x\t", '\t'), (std::vector<std::string>{"x", ""}));
}

TEST(DataReader, ReadsLinesWithCrlfBomAndNoFinalNewline) {
  const std::string path = write_text(scratch_dir() + "/a.txt", "\xEF\xBB\xBF标题一\t1\r\n标题\xEF\xBF\xBD二\t0");
  const Dataset d = read_labeled_file(path, 2, {});
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d.titles[0], "标题一");
  EXPECT_EQ(d.labels[0], 1);
  EXPECT_EQ(d.titles[1], "标题\xEF\xBF\xBD二");  // U+FFFD is kept
  EXPECT_EQ(d.labels[1], 0);
}

TEST(DataReader, NamesFileAndLineOfEachKindOfBadLine) {
  const std::string dir = scratch_dir();
  EXPECT_EQ(data_error_message(write_text(dir + "/tab.txt", "ok\t1\nno tab here\n"), 10),
            dir + "/tab.txt:2: no tab between title and label");
  EXPECT_EQ(data_error_message(write_text(dir + "/num.txt", "a\tx1\n"), 10),
            dir + "/num.txt:1: label 'x1' is not a non-negative integer");
  EXPECT_EQ(data_error_message(write_text(dir + "/range.txt", "a\t1\nb\t2\nc\t10\n"), 10),
            dir + "/range.txt:3: label 10 out of range 0..9");
  EXPECT_EQ(data_error_message(write_text(dir + "/long.txt", "a\t12345678901234567890\n"), 10),
            dir + "/long.txt:1: label 12345678901234567890 out of range 0..9");  // was "not a non-negative integer"
  const Dataset zeros = read_labeled_file(write_text(dir + "/zeros.txt", "a\t00000000001\nb\t0000000000\n"), 10, {});
  EXPECT_EQ(zeros.labels, (std::vector<int>{1, 0}));  // leading zeros are no magnitude
  EXPECT_EQ(data_error_message(write_text(dir + "/empty.txt", " \t1\n"), 10), dir + "/empty.txt:1: empty title");
  EXPECT_EQ(data_error_message(write_text(dir + "/utf.txt", "a\t1\n\xC3\x28\t1\n"), 10),
            dir + "/utf.txt:2: title is not valid UTF-8");
  EXPECT_EQ(data_error_message(write_text(dir + "/none.txt", ""), 10), dir + "/none.txt: no usable lines");
}

TEST(DataReader, PassesOverBlankLinesAndKeepsLineNumbers) {
  const std::string dir = scratch_dir();
  const Dataset d = read_labeled_file(write_text(dir + "/blank.txt", "a\t1\n\n \r\nb\t0\n\n"), 2, {});
  EXPECT_EQ(d.titles, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(d.skipped_lines, 0u);
  EXPECT_EQ(data_error_message(write_text(dir + "/after.txt", "a\t1\n\nno tab\n"), 2),
            dir + "/after.txt:3: no tab between title and label");
}

TEST(DataReader, SkipsAndCountsBadLinesWhenAsked) {
  const std::string path = write_text(scratch_dir() + "/mixed.txt", "a\t1\nbad\nb\t99\nc\t0\n");
  const Dataset d = read_labeled_file(path, 10, ReadOptions{true});
  EXPECT_EQ(d.size(), 2u);
  EXPECT_EQ(d.skipped_lines, 2u);
}

TEST(DataReader, ClassFileWithoutFinalNewline) {
  const std::string path = write_text(scratch_dir() + "/class.txt", "finance\nrealty\r\nstocks");
  const LabelSet labels = read_class_file(path);
  EXPECT_EQ(labels.names, (std::vector<std::string>{"finance", "realty", "stocks"}));
  EXPECT_EQ(labels.id_of("stocks"), 2);
  EXPECT_EQ(labels.id_of("sports"), -1);
}

// "unknown" read as an LLM's answer of no class; "stocks " differed from "stocks" by a quote's width.
TEST(DataReader, ClassNamesThatReadAsAnotherAreRefused) {
  const std::string dir = scratch_dir();
  for (const auto& [text, want] :
       {std::pair{"finance\nunknown\n", ":2: 'unknown' is newscls's word for no class"},
        std::pair{"finance\nstocks \n", ":2: class name 'stocks ' begins or ends with a space"},
        std::pair{" finance\nstocks\n", ":1: class name ' finance' begins"}}) {
    const std::string path = write_text(dir + "/class.txt", text);
    try {
      read_class_file(path);
      ADD_FAILURE() << "accepted " << text;
    } catch (const DataError& e) {
      EXPECT_NE(std::string(e.what()).find(path + want), std::string::npos) << e.what();
    }
  }
}

TEST(DataReader, MissingFileIsAnIoErrorNamingIt) {
  try {
    read_labeled_file("/nonexistent/x.txt", 2, {});
    FAIL() << "expected IoError";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/x.txt"), std::string::npos);
  }
}

TEST(TitleReader, StreamsTitlesDroppingLabelsAndCr) {
  const std::string path = write_text(scratch_dir() + "/in.txt", "一\t3\r\n二 three\n\n四\tnot a label");
  TitleReader reader(path);
  std::string t;
  std::vector<std::string> got;
  while (reader.next(t)) got.push_back(t);
  EXPECT_EQ(got, (std::vector<std::string>{"一", "二 three", "", "四\tnot a label"}));
  EXPECT_EQ(reader.line_number(), 4u);
}

TEST(DataLayoutSearch, FlagWithoutClassFileIsRefused) {
  EXPECT_THROW(resolve_data_dir(scratch_dir()), IoError);
  // --data naming a file (train.txt, say) says so: "no class.txt in this data folder" misled.
  const std::string file = write_text(scratch_dir() + "/train.txt", "a\t1\n");
  try {
    resolve_data_dir(file);
    ADD_FAILURE() << "a file accepted as the data folder";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("is a file; --data names a folder"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace newscls
