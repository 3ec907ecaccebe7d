// The three splits a training run reads once (train, compress, and the lead's adapt): those of
// a data folder, or of labelled files in any format (newscls/core/record_reader.h).
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "newscls/core/data.h"
#include "newscls/core/record_reader.h"

namespace newscls {

struct Splits {
  DataLayout layout;  // the data folder; dir "" when read from files
  LabelSet labels;
  Dataset train, dev, test;
  std::string source;               // what the manifest's "data" names: the folder, or the train file
  std::string data_sha256;          // the data's fingerprint (a resumed run compares it)
  std::string test_split = "test";  // "dev" when no test file was given: the test figures are dev's
  nlohmann::json facts;             // how files were read (the manifest's "data_files"); null for a folder
};

// Reads class.txt and the train, dev and test files of the resolved data folder.
Splits read_splits(const std::string& data_dir, bool skip_bad_lines);

// Reads labelled files: the class list from files.classes, else train's label names; without
// dev, a stratified share of train (files.dev_fraction, seed); without test, the dev set
// stands in for it (test_split "dev"). DataError for train with fewer than 2 classes.
Splits read_split_files(const DataFiles& files, std::uint64_t seed, bool skip_bad_lines);

// files when given, else the data folder.
Splits read_training_data(const std::string& data_dir, const DataFiles& files, std::uint64_t seed, bool skip_bad_lines);

// What `newscls audit` judges: the whole training file (no dev drawn from it) and its class
// list; dev is the data folder's dev.txt or files.dev, else empty; test is not read.
Splits read_audit_data(const std::string& data_dir, const DataFiles& files, bool skip_bad_lines);

}  // namespace newscls
