#include "workflow/splits.h"

#include <spdlog/spdlog.h>

namespace newscls {

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
  return s;
}

}  // namespace newscls
