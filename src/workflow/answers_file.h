// A reader's answers: the file `newscls ask` writes (CSV, header title,label,suggested,score,
// label empty) once the reader has filled in the label column, read back by `ask --labels` (not
// to ask the same titles again) and `adapt --labels` (to learn from them).
//
// Any labelled format (docs/DATA_FORMATS.md), columns title and label by default. A label is a
// class name, `none` (the title fits no class) or empty (skipped: seen, not answered). Every
// title must be one of the feed's. A title answered again, in the same file or a later one,
// takes its last answer (a reader correcting one).
//
//   AnswerSet answers = read_answer_files({"ask1.csv"}, default_answer_format(), labels, feed_titles);
#pragma once

#include <cstddef>
#include <string>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "newscls/core/data.h"
#include "newscls/core/record_reader.h"

namespace newscls {

// An answer's label besides a class id.
constexpr int kNoneAnswer = -2;     // fits no class
constexpr int kSkippedAnswer = -3;  // left empty

struct Answer {
  std::string title;
  int label = kSkippedAnswer;  // a class id, kNoneAnswer or kSkippedAnswer
  std::string file;
  std::size_t line = 0;
};

struct AnswerSet {
  std::vector<Answer> answers;                     // one per title (its last answer), in the order first met
  nlohmann::json files = nlohmann::json::array();  // each file's path, sha256 and counts
  // The titles answered or skipped: `ask` asks none of them again.
  std::unordered_set<std::string> titles() const;
  std::size_t count(int label) const;
  // For the manifest: each class's count, none's, skipped's, and the files.
  nlohmann::json facts(const LabelSet& labels) const;
};

// DataError naming file:line for a record that is bad, an answer that is neither a class name
// nor none, or a title the feed lacks; DataError for a file that holds no answer row at all.
AnswerSet read_answer_files(const std::vector<std::string>& paths, const FormatOptions& format, const LabelSet& labels,
                            const std::unordered_set<std::string>& feed_titles);

}  // namespace newscls
