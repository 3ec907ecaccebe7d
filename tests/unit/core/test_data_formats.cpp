// The labelled-file formats (newscls/core/record_reader.h): each format's records, labels as names
// or ids, and each kind of bad input refused naming file and line, or skipped and counted.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "newscls/core/error.h"
#include "newscls/core/record_reader.h"
#include "test_support.h"

namespace newscls {
namespace {

using testing::scratch_dir;
using testing::write_text;

NamedRecords read_named(const std::string& path, const FormatOptions& format = {}, bool skip = false) {
  return read_records_naming_classes(path, format, ReadOptions{skip});
}

// what() of the DataError reading path throws; "no error" when none.
std::string data_error(const std::string& path, const FormatOptions& format = {}) {
  try {
    read_named(path, format);
  } catch (const DataError& e) {
    return e.what();
  }
  return "no error";
}

TEST(DataFormats, FormatByExtensionOrFlag) {
  EXPECT_EQ(format_of("a/b.CSV", ""), DataFormat::kCsv);
  EXPECT_EQ(format_of("b.jsonl", ""), DataFormat::kJsonl);
  EXPECT_EQ(format_of("b.json", ""), DataFormat::kJsonl);
  EXPECT_EQ(format_of("b.ft", ""), DataFormat::kFastText);
  EXPECT_EQ(format_of("b.txt", ""), DataFormat::kTsv);
  EXPECT_EQ(format_of("dir.csv/b", ""), DataFormat::kTsv);  // no extension: TSV, as before formats
  EXPECT_EQ(format_of("b.txt", "csv"), DataFormat::kCsv);
  EXPECT_THROW(format_of("b.txt", "xlsx"), UsageError);
}

TEST(DataFormats, TsvLabelsAreNamesSortedIntoTheClassList) {
  const std::string path =
      write_text(scratch_dir() + "/a.tsv", "\xEF\xBB\xBF球队夺冠\t体育\r\n\n股市上涨\t财经\n游戏\t发布\t游戏");
  const NamedRecords r = read_named(path);
  EXPECT_EQ(r.labels.names, (std::vector<std::string>{"体育", "游戏", "财经"}));  // by UTF-8 bytes
  EXPECT_EQ(r.data.titles, (std::vector<std::string>{"球队夺冠", "股市上涨", "游戏\t发布"}));
  EXPECT_EQ(r.data.labels, (std::vector<int>{0, 2, 1}));
  EXPECT_EQ(r.data.line_numbers, (std::vector<std::size_t>{1, 3, 4}));
}

TEST(DataFormats, NumericNamesSortByValueAndStayNames) {
  const NamedRecords r = read_named(write_text(scratch_dir() + "/n.tsv", "a\t10\nb\t2\nc\t0\n"));
  EXPECT_EQ(r.labels.names, (std::vector<std::string>{"0", "2", "10"}));
  EXPECT_EQ(r.data.labels, (std::vector<int>{2, 1, 0}));  // "2" is the class named 2, not id 2
}

TEST(DataFormats, CsvQuotedFieldsBomCrlfAndColumnsByName) {
  const std::string csv =
      "\xEF\xBB\xBF"
      "id,label,text\r\n"
      "1,sports,\"a, b \"\"c\"\"\"\r\n"
      "2,finance,\"two\r\nlines\"\r\n"
      "\r\n"
      "3,sports,plain\r\n";
  const NamedRecords r = read_named(write_text(scratch_dir() + "/a.csv", csv));
  EXPECT_EQ(r.data.titles, (std::vector<std::string>{"a, b \"c\"", "two lines", "plain"}));
  EXPECT_EQ(r.labels.names, (std::vector<std::string>{"finance", "sports"}));
  EXPECT_EQ(r.data.labels, (std::vector<int>{1, 0, 1}));
  EXPECT_EQ(r.data.line_numbers, (std::vector<std::size_t>{2, 3, 6}));  // where each record starts
}

TEST(DataFormats, CsvAndJsonlColumnsAreConfigurable) {
  const std::string dir = scratch_dir();
  FormatOptions format;
  format.text_column = "title";
  format.label_column = "cat";
  const NamedRecords csv = read_named(write_text(dir + "/a.csv", "cat,title\nx,one\ny,two\n"), format);
  EXPECT_EQ(csv.data.titles, (std::vector<std::string>{"one", "two"}));
  const NamedRecords json = read_named(
      write_text(dir + "/a.jsonl", "{\"title\": \"one\", \"cat\": \"x\"}\n{\"cat\": \"y\", \"title\": \"t\\nwo\"}\n"),
      format);
  EXPECT_EQ(json.data.titles, (std::vector<std::string>{"one", "t wo"}));
  EXPECT_EQ(json.data.labels, (std::vector<int>{0, 1}));
  EXPECT_EQ(data_error(dir + "/a.csv"),
            dir + "/a.csv:1: no column 'text' in the header (its columns: cat, title); name it with --text-column");
  EXPECT_EQ(data_error(write_text(dir + "/semi.csv", "text;label\na;x\n")),
            dir +
                "/semi.csv:1: no column 'text' in the header (its columns: text;label); name it with --text-column "
                "(newscls reads comma-separated values; this header holds ';' or a tab)");
}

TEST(DataFormats, JsonlLabelsAsStringsOrWholeNumbers) {
  const std::string path = write_text(scratch_dir() + "/a.jsonl",
                                      "{\"text\": \"一\", \"label\": 1}\r\n\n{\"text\": \"二\", \"label\": \"0\"}\n");
  const NamedRecords r = read_named(path);
  EXPECT_EQ(r.labels.names, (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(r.data.labels, (std::vector<int>{1, 0}));
  EXPECT_EQ(r.data.line_numbers, (std::vector<std::size_t>{1, 3}));
}

TEST(DataFormats, FastTextLabelPrefix) {
  const NamedRecords r =
      read_named(write_text(scratch_dir() + "/a.ft", "__label__sports 球队 夺冠\n__label__finance\t股市\n"));
  EXPECT_EQ(r.data.titles, (std::vector<std::string>{"球队 夺冠", "股市"}));
  EXPECT_EQ(r.labels.names, (std::vector<std::string>{"finance", "sports"}));
  EXPECT_EQ(r.data.labels, (std::vector<int>{1, 0}));
}

TEST(DataFormats, EachBadRecordNamesFileAndLine) {
  const std::string dir = scratch_dir();
  const auto at = [&](const std::string& name, const std::string& content) {
    return data_error(write_text(dir + "/" + name, content));
  };
  EXPECT_EQ(at("empty.tsv", "a\tx\n \ty\n"), dir + "/empty.tsv:2: empty text");
  EXPECT_EQ(at("tab.tsv", "a\tx\nno tab\n"), dir + "/tab.tsv:2: no tab between title and label");
  EXPECT_EQ(at("nolabel.tsv", "a\tx\nb\t \n"), dir + "/nolabel.tsv:2: empty label");
  EXPECT_EQ(at("ragged.csv", "text,label\na,x\nb,y,extra\n"), dir + "/ragged.csv:3: 3 fields where the header has 2");
  EXPECT_EQ(at("short.csv", "text,label\na,x\nb\n"), dir + "/short.csv:3: 1 field where the header has 2");
  EXPECT_EQ(at("unterminated.csv", "text,label\na,x\n\"b,y\nc,z\n"),
            dir + "/unterminated.csv:3: unterminated quoted field: the \" opened on this line is never closed");
  EXPECT_EQ(
      at("afterquote.csv", "text,label\n\"a\"b,x\n"),
      dir +
          "/afterquote.csv:2: text after the closing quote of a field (a quote inside a quoted field is written \"\")");
  EXPECT_THAT(
      at("bad.jsonl", "{\"text\": \"a\", \"label\": \"x\"}\n{\"text\": \"b\", \"label\": \n"),
      ::testing::AllOf(::testing::StartsWith(dir + "/bad.jsonl:2: not a JSON object: parse error at line 1, column"),
                       ::testing::EndsWith("(JSON Lines: one whole object per line)")));
  EXPECT_THAT(at("huge.jsonl", "{\"text\": \"a\", \"label\": 1e999}\n"),
              ::testing::StartsWith(dir + "/huge.jsonl:1: not a JSON object: number overflow"));
  EXPECT_EQ(at("key.jsonl", "{\"text\": \"a\"}\n"),
            dir + "/key.jsonl:1: no \"label\" key (name the label's key with --label-column)");
  EXPECT_EQ(at("twice.jsonl", "{\"text\": \"a\", \"text\": \"b\", \"label\": \"x\"}\n"),
            dir + "/twice.jsonl:1: key \"text\" appears twice");
  EXPECT_EQ(at("array.json", "[{\"text\": \"a\", \"label\": \"x\"}]\n"),
            dir + "/array.json:1: a JSON array; newscls reads JSON Lines, one object per line");
  EXPECT_EQ(at("nolabel.ft", "__label__x a\njust text\n"),
            dir + "/nolabel.ft:2: no __label__NAME at the start of the line");
  EXPECT_EQ(at("two.ft", "__label__x __label__y a\n"),
            dir + "/two.ft:1: more than one __label__: newscls gives a title one class");
  EXPECT_EQ(at("utf16.tsv", std::string("a\0\tx\n", 5)),
            dir + "/utf16.tsv:1: a NUL byte in the record: is the file UTF-16? newscls reads UTF-8");
}

TEST(DataFormats, OneClassOnlyAndTooManyClassesAreRefused) {
  const std::string dir = scratch_dir();
  EXPECT_EQ(data_error(write_text(dir + "/one.tsv", "a\tx\nb\tx\n")),
            dir + "/one.tsv: one class only ('x'): a classifier needs titles of at least 2 classes");
  std::string many;
  for (int i = 0; i <= kMaxClasses; ++i) many += "t\t" + std::to_string(i) + "\n";
  EXPECT_EQ(data_error(write_text(dir + "/many.tsv", many)),
            dir +
                "/many.tsv:1001: more than 1,000 distinct labels; newscls takes 2 to 1,000 classes (is the label "
                "column the right one?)");
  many.resize(many.rfind("t\t"));  // exactly 1,000
  EXPECT_EQ(read_named(write_text(dir + "/many.tsv", many)).labels.size(), kMaxClasses);
}

TEST(DataFormats, SkipBadLinesCountsWhatItSkipped) {
  const std::string path = write_text(scratch_dir() + "/a.csv", "text,label\na,x\nb,y,z\n,y\nc,y\n");
  const NamedRecords r = read_named(path, {}, /*skip=*/true);
  EXPECT_EQ(r.data.titles, (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(r.data.skipped_lines, 2u);
  // An unterminated quote has no known end to skip to.
  EXPECT_THROW(read_named(write_text(scratch_dir() + "/b.csv", "text,label\n\"a,x\n"), {}, true), DataError);
}

TEST(DataFormats, AClassListReadsNamesFirstThenIds) {
  const LabelSet labels{{"sports", "finance", "7"}};
  EXPECT_EQ(label_id_of(labels, "finance"), 1);
  EXPECT_EQ(label_id_of(labels, "0"), 0);
  EXPECT_EQ(label_id_of(labels, "0001"), 1);  // leading zeros do not count, as in class.txt's files
  EXPECT_EQ(label_id_of(labels, "007"), -1);  // not the name "7"; id 7 of 3 classes
  EXPECT_EQ(label_id_of(labels, "7"), 2);     // a name before an id
  EXPECT_EQ(label_id_of(labels, "3"), -1);
  EXPECT_EQ(label_id_of(labels, "99999999999"), -1);
  const std::string dir = scratch_dir();
  const std::string path = write_text(dir + "/dev.tsv", "a\tfinance\nb\t0\nc\tgame\n");
  try {
    read_records(path, labels, {}, {});
    FAIL() << "an unknown label was read";
  } catch (const DataError& e) {
    EXPECT_EQ(std::string(e.what()),
              path + ":3: label 'game' is neither one of the 3 classes (sports, finance, 7) nor a class id 0..2");
  }
  const Dataset kept = read_records(path, labels, {}, ReadOptions{true});
  EXPECT_EQ(kept.labels, (std::vector<int>{1, 0}));
  EXPECT_EQ(kept.skipped_lines, 1u);
}

}  // namespace
}  // namespace newscls
