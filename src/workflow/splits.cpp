#include "workflow/splits.h"

#include <string>
#include <vector>

#include <spdlog/spdlog.h>

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
  if (!missing.empty()) spdlog::warn("{}: no training title of class {}: the model cannot learn it", train.path, missing);
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
  spdlog::info("data {}: train {} dev {} test {} titles, {} classes", s.layout.dir, s.train.size(), s.dev.size(),
               s.test.size(), s.labels.size());
  warn_of_classes_without_titles(s.train, s.labels);
  return s;
}

}  // namespace newscls
