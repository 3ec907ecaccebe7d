#include "workflow/answers_file.h"

#include <algorithm>
#include <unordered_map>

#include <spdlog/spdlog.h>

#include "newscls/core/error.h"
#include "newscls/core/sha256.h"
#include "newscls/core/utf8.h"
#include "newscls/workflow/ask_workflow.h"

namespace newscls {
namespace {

constexpr const char* kNoneWord = "none";
// RecordReader's word for a record whose label is empty: here a skipped title, not a bad one.
constexpr const char* kEmptyLabelProblem = "empty label";

std::string class_names(const LabelSet& labels) {
  std::string names;
  for (const std::string& name : labels.names) names += (names.empty() ? "" : ", ") + name;
  return names;
}

int answer_label(const std::string& path, const RawRecord& r, const LabelSet& labels) {
  if (r.problem == kEmptyLabelProblem) return kSkippedAnswer;
  if (!r.problem.empty()) throw DataError(path, r.line, r.problem);
  if (r.label == kNoneWord) return kNoneAnswer;
  const int id = labels.id_of(r.label);
  if (id < 0) {
    throw DataError(path, r.line,
                    "answer '" + quoted_for_message(r.label, 40) + "' is neither a class (" + class_names(labels) +
                        ") nor none (fits no class); leave it empty to skip the title");
  }
  return id;
}

}  // namespace

std::unordered_set<std::string> AnswerSet::titles() const {
  std::unordered_set<std::string> out;
  for (const Answer& a : answers) out.insert(a.title);
  return out;
}

std::size_t AnswerSet::count(int label) const {
  return static_cast<std::size_t>(
      std::count_if(answers.begin(), answers.end(), [label](const Answer& a) { return a.label == label; }));
}

nlohmann::json AnswerSet::facts(const LabelSet& labels) const {
  nlohmann::json classes = nlohmann::json::object();
  for (int c = 0; c < labels.size(); ++c) classes[labels.names[static_cast<std::size_t>(c)]] = count(c);
  return {{"classes", classes}, {"none", count(kNoneAnswer)}, {"skipped", count(kSkippedAnswer)}, {"files", files}};
}

FormatOptions default_answer_format() {
  FormatOptions format;
  format.text_column = "title";
  format.label_column = "label";
  return format;
}

AnswerSet read_answer_files(const std::vector<std::string>& paths, const FormatOptions& format, const LabelSet& labels,
                            const std::unordered_set<std::string>& feed_titles) {
  AnswerSet set;
  std::unordered_map<std::string, std::size_t> where;  // title -> its place in set.answers
  for (const std::string& path : paths) {
    RecordReader reader(path, format);
    std::size_t rows = 0, answered = 0;
    for (RawRecord r; reader.next(r);) {
      Answer answer{r.text, answer_label(path, r, labels), path, r.line};
      if (feed_titles.count(answer.title) == 0) {
        throw DataError(path, r.line,
                        "title '" + quoted_for_message(answer.title, 60) + "' is not in the feed (--unlabeled)");
      }
      ++rows;
      answered += answer.label != kSkippedAnswer;
      const auto [it, fresh] = where.emplace(answer.title, set.answers.size());
      if (fresh) {
        set.answers.push_back(std::move(answer));
      } else {
        set.answers[it->second] = std::move(answer);  // the last answer counts
      }
    }
    if (rows == 0)
      throw DataError(path, 0, "holds no answer rows (an answer file is what `newscls ask` writes, labelled)");
    if (answered == 0)
      spdlog::warn("{}: all {} answers are empty (skipped titles): nothing to learn from it", path, rows);
    set.files.push_back({{"path", path}, {"sha256", sha256_file_hex(path)}, {"rows", rows}, {"answered", answered}});
  }
  return set;
}

}  // namespace newscls
