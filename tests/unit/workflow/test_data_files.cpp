// Training data from labelled files (workflow/splits.h): the dev split drawn when there is no
// dev file, the test figures' stand-in, labels unknown to train, and the same titles in TSV,
// CSV and JSONL training byte-identical bundles.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "newscls/core/bundle.h"
#include "newscls/core/error.h"
#include "newscls/workflow/train_workflow.h"
#include "test_support.h"
#include "workflow/splits.h"

namespace newscls {
namespace {

using testing::scratch_dir;
using testing::source_dir;
using testing::write_text;

struct Titled {
  std::string title, label;
};

// The tiny fixture's train titles with their class names.
std::vector<Titled> fixture_titles() {
  const std::vector<std::string> names = {"sports", "finance", "game"};
  std::ifstream in(source_dir() + "/tests/fixtures/tiny/train.txt");
  std::vector<Titled> out;
  for (std::string line; std::getline(in, line);) {
    const std::size_t tab = line.rfind('\t');
    out.push_back({line.substr(0, tab), names.at(std::stoul(line.substr(tab + 1)))});
  }
  return out;
}

std::string as_tsv(const std::vector<Titled>& rows) {
  std::string s;
  for (const Titled& r : rows) s += r.title + "\t" + r.label + "\n";
  return s;
}

std::string as_csv(const std::vector<Titled>& rows) {
  std::string s = "label,text\r\n";
  for (const Titled& r : rows) s += r.label + ",\"" + r.title + "\"\r\n";
  return s;
}

std::string as_jsonl(const std::vector<Titled>& rows) {
  std::string s;
  for (const Titled& r : rows) s += nlohmann::json{{"label", r.label}, {"text", r.title}}.dump() + "\n";
  return s;
}

// what() of the DataError reading files throws; "no error" when none.
std::string split_error(const DataFiles& files) {
  try {
    read_split_files(files, 1, false);
  } catch (const DataError& e) {
    return e.what();
  }
  return "no error";
}

TEST(DataFiles, NoDevFileDrawsAStratifiedSeededShareAndTestIsDev) {
  const std::vector<Titled> rows = fixture_titles();
  DataFiles files;
  files.train = write_text(scratch_dir() + "/train.tsv", as_tsv(rows));
  files.dev_fraction = 0.2;
  const Splits s = read_split_files(files, 7, false);
  EXPECT_EQ(s.labels.names, (std::vector<std::string>{"finance", "game", "sports"}));
  EXPECT_EQ(s.train.size() + s.dev.size(), rows.size());
  std::vector<int> per_class(3, 0);
  for (int label : s.dev.labels) ++per_class[static_cast<std::size_t>(label)];
  EXPECT_EQ(per_class, (std::vector<int>{2, 2, 2}));  // 20% of each class's 10 titles
  EXPECT_EQ(s.test_split, "dev");
  EXPECT_EQ(s.test.titles, s.dev.titles);
  EXPECT_EQ(s.facts["dev_split"]["titles"], 6);
  EXPECT_EQ(s.facts["dev_split"]["seed"], 7);
  EXPECT_EQ(s.facts["dev_split"]["fraction"], 0.2);
  EXPECT_EQ(s.facts["classes"], "the train file's label names, sorted");
  // The same seed draws the same titles; another seed others.
  EXPECT_EQ(read_split_files(files, 7, false).dev.line_numbers, s.dev.line_numbers);
  EXPECT_NE(read_split_files(files, 8, false).dev.line_numbers, s.dev.line_numbers);
}

TEST(DataFiles, ALabelOfDevOrTestUnknownToTrainNamesItsLine) {
  const std::string dir = scratch_dir();
  DataFiles files;
  files.train = write_text(dir + "/train.csv", "text,label\na,x\nb,y\n");
  files.dev = write_text(dir + "/dev.jsonl", "{\"text\": \"c\", \"label\": \"x\"}\n");
  files.test = write_text(dir + "/test.ft", "__label__y d\n__label__z e\n");
  EXPECT_EQ(split_error(files),
            dir + "/test.ft:2: label 'z' is neither one of the 2 classes (x, y) nor a class id 0..1");
  const Splits s = read_split_files(files, 1, true);
  EXPECT_EQ(s.test.skipped_lines, 1u);
  EXPECT_EQ(s.test_split, "test");
  EXPECT_FALSE(s.facts.contains("dev_split"));
}

TEST(DataFiles, AClassListMakesIdsAndOneClassOnlyIsRefused) {
  const std::string dir = scratch_dir();
  DataFiles files;
  files.classes = write_text(dir + "/class.txt", "sports\nfinance\n");
  files.train = write_text(dir + "/train.tsv", "a\t1\nb\tsports\nc\t1\nd\t0\n");
  files.dev = write_text(dir + "/dev.tsv", "e\t0\n");
  const Splits s = read_split_files(files, 1, false);
  EXPECT_EQ(s.labels.names, (std::vector<std::string>{"sports", "finance"}));
  EXPECT_EQ(s.train.labels, (std::vector<int>{1, 0, 1, 0}));
  files.train = write_text(dir + "/one.tsv", "a\tfinance\nb\t1\n");
  EXPECT_EQ(split_error(files),
            dir + "/one.tsv: one class only ('finance'): a classifier needs titles of at least 2 classes");
}

// A fasttext bundle trained on threads=1 is a function of the titles, labels and seed alone.
std::string train_into(const std::string& train, const std::string& out) {
  TrainRequest request;
  request.family = "fasttext";
  request.files.train = train;
  request.out_dir = out;
  request.overrides = {"epochs=2", "dim=8", "buckets=4096"};
  request.seed = 5;
  request.threads = 1;
  train_model(request);
  return out;
}

TEST(DataFiles, TsvCsvAndJsonlOfTheSameTitlesTrainByteIdenticalBundles) {
  const std::vector<Titled> rows = fixture_titles();
  const std::string dir = scratch_dir();
  const Bundle tsv = Bundle::open(train_into(write_text(dir + "/t.tsv", as_tsv(rows)), dir + "/tsv"));
  const std::vector<std::pair<std::string, std::string>> others = {{"t.csv", as_csv(rows)},
                                                                   {"t.jsonl", as_jsonl(rows)}};
  for (const auto& [name, content] : others) {
    SCOPED_TRACE(name);
    const Bundle other = Bundle::open(train_into(write_text(dir + "/" + name, content), dir + "/" + name + ".bundle"));
    const Manifest &a = tsv.manifest(), &b = other.manifest();
    ASSERT_FALSE(a.payloads.empty());
    EXPECT_EQ(a.payloads, b.payloads);  // payload name -> sha256: the model's bytes
    EXPECT_EQ(a.labels, b.labels);
    EXPECT_EQ(a.config, b.config);
    EXPECT_EQ(a.training.at("calibration"), b.training.at("calibration"));
    EXPECT_EQ(a.training.at("test_accuracy"), b.training.at("test_accuracy"));
    EXPECT_EQ(a.training.at("data_files").at("dev_split").at("titles"),
              b.training.at("data_files").at("dev_split").at("titles"));
    EXPECT_NE(a.training.at("data"), b.training.at("data"));  // each names its own file
  }
  EXPECT_EQ(tsv.manifest().labels, (std::vector<std::string>{"finance", "game", "sports"}));
}

}  // namespace
}  // namespace newscls
