#include "workflow/splits.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "newscls/core/error.h"
#include "newscls/core/sha256.h"
#include "workflow/dev_split.h"

namespace newscls {

namespace {

// A class no training title has can never be learnt: a misnumbered label column, or a
// class.txt with a class too many, would otherwise go unnoticed until the figures.
void warn_of_classes_without_titles(const Dataset& train, const LabelSet& labels) {
  std::vector<std::size_t> count(labels.size(), 0);
  for (int label : train.labels) ++count[static_cast<std::size_t>(label)];
  std::string missing;
  for (std::size_t c = 0; c < count.size(); ++c) {
    if (count[c] == 0) missing += (missing.empty() ? "" : ", ") + labels.names[c] + " (" + std::to_string(c) + ")";
  }
  if (!missing.empty())
    spdlog::warn("{}: no training title of class {}: the model cannot learn it", train.path, missing);
}

void log_splits(const Splits& s) {
  spdlog::info("data {}: train {} dev {} test {} titles, {} classes", s.source, s.train.size(), s.dev.size(),
               s.test.size(), s.labels.size());
  warn_of_classes_without_titles(s.train, s.labels);
}

void refuse_one_class(const Dataset& train, const LabelSet& labels) {
  const std::set<int> present(train.labels.begin(), train.labels.end());
  if (present.size() >= 2) return;
  throw DataError(train.path, 0,
                  "one class only ('" + labels.names[static_cast<std::size_t>(*present.begin())] +
                      "'): a classifier needs titles of at least 2 classes");
}

// The files' sums and how they are read: another column or dev share is other data.
std::string files_fingerprint(const DataFiles& f) {
  std::string hashes;
  for (const std::string& path : {f.classes, f.train, f.dev, f.test})
    hashes += path.empty() ? sha256_hex("") : sha256_file_hex(path);
  const nlohmann::json how = {{"format", f.format.format},
                              {"text_column", f.format.text_column},
                              {"label_column", f.format.label_column},
                              {"dev_fraction", f.dev_fraction}};
  return sha256_hex(hashes + how.dump());
}

nlohmann::json path_or_null(const std::string& path) { return path.empty() ? nlohmann::json() : nlohmann::json(path); }

nlohmann::json files_facts(const DataFiles& f, const Splits& s) {
  nlohmann::json formats = nlohmann::json::object();
  const std::vector<std::pair<std::string, std::string>> named = {{"train", f.train}, {"dev", f.dev}, {"test", f.test}};
  for (const auto& [name, path] : named) {
    if (!path.empty()) formats[name] = to_string(format_of(path, f.format.format));
  }
  return {{"train", f.train},
          {"dev", path_or_null(f.dev)},
          {"test", path_or_null(f.test)},
          {"classes",
           f.classes.empty() ? nlohmann::json("the train file's label names, sorted") : nlohmann::json(f.classes)},
          {"formats", formats},
          {"text_column", f.format.text_column},
          {"label_column", f.format.label_column},
          {"test_figures", s.test_split == "dev" ? "the dev split's (no test file)" : "the test file's"}};
}

nlohmann::json dev_split_facts(const DataFiles& f, const Splits& s, std::uint64_t seed) {
  return {{"from", f.train},
          {"fraction", f.dev_fraction},
          {"seed", seed},
          {"method", "stratified by class, seeded shuffle"},
          {"titles", s.dev.size()},
          {"train_titles_left", s.train.size()},
          {"lines_sha256", dev_lines_sha256(s.dev)}};
}

// The train file and the class list (files.classes, else train's label names).
void read_train_file(const DataFiles& files, const ReadOptions& options, Splits& s) {
  if (files.classes.empty()) {
    NamedRecords named = read_records_naming_classes(files.train, files.format, options);
    s.train = std::move(named.data);
    s.labels = std::move(named.labels);
  } else {
    s.labels = read_class_file(files.classes);
    if (s.labels.size() > kMaxClasses)
      throw DataError(files.classes, 0, "more than 1,000 classes; newscls takes 2 to 1,000");
    s.train = read_records(files.train, s.labels, files.format, options);
  }
  refuse_one_class(s.train, s.labels);
}

}  // namespace

Splits read_splits(const std::string& data_dir, bool skip_bad_lines) {
  Splits s;
  s.layout = resolve_data_dir(data_dir);
  s.labels = read_class_file(s.layout.classes());
  const ReadOptions options{skip_bad_lines};
  s.train = read_labeled_file(s.layout.train(), s.labels.size(), options);
  s.dev = read_labeled_file(s.layout.dev(), s.labels.size(), options);
  s.test = read_labeled_file(s.layout.test(), s.labels.size(), options);
  s.source = s.layout.dir;
  s.data_sha256 = data_fingerprint(s.layout);
  log_splits(s);
  return s;
}

Splits read_split_files(const DataFiles& files, std::uint64_t seed, bool skip_bad_lines) {
  if (!(files.dev_fraction > 0 && files.dev_fraction < 1)) throw UsageError("--dev-fraction must lie between 0 and 1");
  const ReadOptions options{skip_bad_lines};
  Splits s;
  read_train_file(files, options, s);
  s.dev = files.dev.empty() ? split_off_dev(s.train, s.labels.size(), files.dev_fraction, seed)
                            : read_records(files.dev, s.labels, files.format, options);
  if (files.test.empty()) {
    s.test = s.dev;
    s.test_split = "dev";
    spdlog::warn(
        "no test file: the test figures are those of the dev set ({}), which calibration and model "
        "selection also see; give --test for figures on unseen titles",
        s.dev.path);
  } else {
    s.test = read_records(files.test, s.labels, files.format, options);
  }
  s.source = files.train;
  s.data_sha256 = files_fingerprint(files);
  s.facts = files_facts(files, s);
  if (files.dev.empty()) s.facts["dev_split"] = dev_split_facts(files, s, seed);
  log_splits(s);
  return s;
}

Splits read_training_data(const std::string& data_dir, const DataFiles& files, std::uint64_t seed,
                          bool skip_bad_lines) {
  if (files.given() && !data_dir.empty()) throw UsageError("--data names a folder, --train a file: give one of them");
  return files.given() ? read_split_files(files, seed, skip_bad_lines) : read_splits(data_dir, skip_bad_lines);
}

Splits read_audit_data(const std::string& data_dir, const DataFiles& files, bool skip_bad_lines) {
  if (files.given() && !data_dir.empty()) throw UsageError("--data names a folder, --train a file: give one of them");
  const ReadOptions options{skip_bad_lines};
  Splits s;
  if (files.given()) {
    read_train_file(files, options, s);
    if (!files.dev.empty()) s.dev = read_records(files.dev, s.labels, files.format, options);
    s.source = files.train;
  } else {
    s.layout = resolve_data_dir(data_dir);
    s.labels = read_class_file(s.layout.classes());
    s.train = read_labeled_file(s.layout.train(), s.labels.size(), options);
    s.dev = read_labeled_file(s.layout.dev(), s.labels.size(), options);
    s.source = s.layout.train();
  }
  spdlog::info("audit of {}: {} titles, {} classes{}", s.source, s.train.size(), s.labels.size(),
               s.dev.size() > 0 ? ", dev " + std::to_string(s.dev.size()) + " titles" : std::string());
  warn_of_classes_without_titles(s.train, s.labels);
  return s;
}

}  // namespace newscls
