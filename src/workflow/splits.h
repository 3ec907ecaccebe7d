// The three splits of a data folder, read once for a workflow (train, compress).
#pragma once

#include <string>

#include "newscls/data.h"

namespace newscls {

struct Splits {
  DataLayout layout;
  LabelSet labels;
  Dataset train, dev, test;
};

// Reads class.txt and the train, dev and test files of the resolved data folder.
Splits read_splits(const std::string& data_dir, bool skip_bad_lines);

}  // namespace newscls
