#include "newscls/workflow/audit_workflow.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include <spdlog/spdlog.h>

#include "newscls/core/atomic_file.h"
#include "newscls/core/bundle.h"
#include "newscls/core/error.h"
#include "newscls/core/parallel.h"
#include "newscls/core/stopwatch.h"
#include "newscls/workflow/registry.h"
#include "newscls/workflow/train_workflow.h"
#include "workflow/audit_file.h"
#include "workflow/confident_learning.h"
#include "workflow/cross_validation.h"

namespace fs = std::filesystem;

namespace newscls {
namespace {

constexpr int kMaxFolds = 100;

// The family's config for the folds, refused before any work when the family cannot be audited.
nlohmann::json fold_config(const AuditRequest& r) {
  auto model = make_classifier(r.family);
  model->configure(build_config(r.family, r.config_file, r.overrides));
  model->check_trainable("");
  const Family& family = find_family(r.family);
  if (!family.trains_from(model->config()).empty()) {
    throw UsageError("audit --model " + r.family +
                     ": it is trained from other bundles, whose training saw these titles, so "
                     "its answers would not be out-of-fold; audit with one of them");
  }
  if (const std::string why = family.unavailable_reason(model->config()); !why.empty()) {
    throw UsageError("audit --model " + r.family + ": " + why);
  }
  return model->config();
}

// The files the audit reads, by what they are: --out may be none of them.
std::vector<std::pair<std::string, std::string>> input_files(const AuditRequest& r) {
  if (r.files.given()) {
    return {
        {"the --train file", r.files.train}, {"the --classes file", r.files.classes}, {"the --dev file", r.files.dev}};
  }
  const DataLayout layout = resolve_data_dir(r.data_dir);
  return {{"the data's train.txt", layout.train()},
          {"the data's class.txt", layout.classes()},
          {"the data's dev.txt", layout.dev()}};
}

// Before any work: --out names a file the audit may write, in a folder it can write to (made
// if missing, as predict makes its --output's).
void check_out(const std::string& out, const AuditRequest& r) {
  if (written_in_place(out)) return;
  refuse_folder_spelling("--out", out);
  if (std::error_code ec; fs::is_directory(out, ec)) {
    throw UsageError("--out " + out + " is a folder: name the CSV file to write");
  }
  if (is_bundle_file(out)) throw UsageError("--out " + out + " is a file of a model bundle; name another file");
  for (const auto& [what, path] : input_files(r)) {
    if (!path.empty() && same_file(out, path)) {
      throw UsageError("--out " + out + " is " + what + ", which the audit reads; name another file");
    }
  }
  const std::string parent = fs::path(out).parent_path().string();
  const std::string folder = parent.empty() ? "." : parent;
  make_directories(folder);
  if (::access(folder.c_str(), W_OK) != 0) {
    throw IoError(folder, "cannot write --out " + out + " there (no permission, or a read-only disk)");
  }
}

std::vector<AuditRow> audit_rows(const LabelAudit& audit, const Splits& data) {
  std::vector<AuditRow> rows;
  const auto name = [&](int c) { return data.labels.names[static_cast<std::size_t>(c)]; };
  for (const LabelIssue& issue : audit.issues) {
    const std::size_t line = data.train.line_numbers.empty() ? issue.row + 1 : data.train.line_numbers[issue.row];
    rows.push_back({line, data.train.titles[issue.row], name(issue.given), name(issue.suggested), issue.score, 0});
  }
  return rows;
}

std::vector<std::pair<std::string, std::size_t>> pair_counts(const std::vector<AuditRow>& rows) {
  std::map<std::string, std::size_t> counts;
  for (const AuditRow& r : rows) ++counts[r.given + " -> " + r.suggested];
  std::vector<std::pair<std::string, std::size_t>> pairs(counts.begin(), counts.end());
  std::stable_sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return pairs;
}

double given_label_accuracy(const std::vector<std::vector<float>>& probs, const std::vector<int>& labels) {
  std::size_t judged = 0, agreed = 0;
  for (std::size_t r = 0; r < probs.size(); ++r) {
    if (probs[r].empty()) continue;
    ++judged;
    agreed += std::max_element(probs[r].begin(), probs[r].end()) - probs[r].begin() == labels[r];
  }
  return judged == 0 ? 0.0 : static_cast<double>(agreed) / static_cast<double>(judged);
}

void log_estimate(const LabelAudit& a, const LabelSet& labels) {
  double off_diagonal = 0;
  std::string thresholds;
  for (std::size_t i = 0; i < a.calibrated.size(); ++i) {
    for (std::size_t j = 0; j < a.calibrated.size(); ++j) off_diagonal += i == j ? 0.0 : a.calibrated[i][j];
    thresholds += fmt::format("{}{} {:.3f}", i == 0 ? "" : ", ", labels.names[i], a.thresholds[i]);
  }
  spdlog::info("confident learning: per-class thresholds {}", thresholds);
  spdlog::info("confident learning: about {:.0f} of {} given labels estimated wrong ({:.2f}%)", off_diagonal, a.judged,
               a.judged == 0 ? 0.0 : 100.0 * off_diagonal / static_cast<double>(a.judged));
}

}  // namespace

const std::vector<std::string>& audit_filter_names() { return issue_filter_names(); }

AuditOutcome run_audit(const AuditRequest& r) {
  const Stopwatch watch;
  const IssueFilter filter = issue_filter_named(r.filter);
  if (r.folds < 2 || r.folds > kMaxFolds) throw UsageError("--folds must be 2.." + std::to_string(kMaxFolds));
  const nlohmann::json config = fold_config(r);
  check_out(r.out, r);
  const Splits data = read_audit_data(r.data_dir, r.files, r.skip_bad_lines);
  if (static_cast<std::size_t>(r.folds) > data.train.size()) {
    throw UsageError("--folds " + std::to_string(r.folds) + ": more folds than the " +
                     std::to_string(data.train.size()) + " training titles");
  }
  FoldTraining training{r.family, config, &data, r.files.dev_fraction, r.folds, r.seed, given_thread_count(r.threads)};
  const std::vector<std::vector<float>> probs = out_of_fold_probs(training);
  const LabelAudit audit = find_label_issues(probs, data.train.labels, data.labels.size(), filter);
  log_estimate(audit, data.labels);
  const std::vector<AuditRow> rows = audit_rows(audit, data);
  write_file_atomic(r.out, audit_csv(rows));
  AuditOutcome outcome;
  outcome.titles = data.train.size();
  outcome.judged = audit.judged;
  outcome.flagged = rows.size();
  outcome.out_of_fold_accuracy = given_label_accuracy(probs, data.train.labels);
  outcome.pairs = pair_counts(rows);
  outcome.seconds = watch.seconds();
  if (outcome.judged < outcome.titles) {
    spdlog::warn("{} titles got no probabilities from the model and were not judged", outcome.titles - outcome.judged);
  }
  return outcome;
}

std::string audit_summary(const AuditOutcome& o, const std::string& out) {
  std::string s =
      fmt::format("audit: out-of-fold accuracy on the given labels {:.4f} ({} titles judged of {}, {:.0f} s)\n",
                  o.out_of_fold_accuracy, o.judged, o.titles, o.seconds);
  const std::string header = "given -> suggested";
  std::size_t width = header.size();
  for (const auto& [pair, count] : o.pairs) width = std::max(width, pair.size());
  s += fmt::format("{:<{}}  {:>7}\n", header, width, "titles");
  for (const auto& [pair, count] : o.pairs) s += fmt::format("{:<{}}  {:>7}\n", pair, width, count);
  s += fmt::format("flagged {} of {} titles ({:.2f}%) as likely mislabelled: {}\n", o.flagged, o.titles,
                   o.titles == 0 ? 0.0 : 100.0 * static_cast<double>(o.flagged) / static_cast<double>(o.titles),
                   out == "-" ? "standard output" : out);
  return s;
}

}  // namespace newscls
