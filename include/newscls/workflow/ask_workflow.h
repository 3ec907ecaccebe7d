// `newscls ask`: which titles of a reader's feed the reader should label, so that `adapt
// --labels` learns most from a few answers (active learning).
//
// The bundle's classifier (any family that gives probabilities) scores the feed's distinct
// titles that no --labels file holds yet (answered or skipped), and the budget's worth are
// written, atomically, to a CSV with the header title,label,suggested,score and the label
// column empty, for the reader to fill in with a class name or `none` (src/workflow/answers_file.h).
// Strategies (src/workflow/ask_selection.h): active (the default) and random.
//
//   AskRequest r; r.model_dir = "runs/fasttext"; r.unlabeled = "feed.txt"; r.budget = 200;
//   r.out = "ask.csv"; AskOutcome o = run_ask(r);
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "newscls/core/record_reader.h"

namespace newscls {

// The format answer files (--labels) are read in unless told otherwise: CSV or any format by
// extension, columns title and label.
FormatOptions default_answer_format();

struct AskRequest {
  std::string model_dir;
  std::string unlabeled;                 // the feed, one title per line
  std::size_t budget = 0;                // titles to ask; from 1 to the feed's unanswered titles
  std::string out;                       // the CSV; "-" = stdout
  std::vector<std::string> label_files;  // answers already given: their titles are not asked again
  FormatOptions label_format = default_answer_format();
  std::string strategy = "active";  // one of ask_strategy_names()
  std::uint64_t seed = 1;           // random's draw
  int threads = 1;                  // resolved (>= 1)
  bool skip_bad_lines = false;      // the feed's
};

struct AskOutcome {
  std::size_t feed_titles = 0;  // distinct titles of the feed
  std::size_t answered = 0;     // of them, held by a --labels file
  std::size_t asked = 0;        // rows written
};

// active, random.
const std::vector<std::string>& ask_strategy_names();

AskOutcome run_ask(const AskRequest& request);

}  // namespace newscls
