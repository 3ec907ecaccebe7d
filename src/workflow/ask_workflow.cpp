// `newscls ask`: the feed titles a reader should label next (newscls/workflow/ask_workflow.h).
#include "newscls/workflow/ask_workflow.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "newscls/core/atomic_file.h"
#include "newscls/core/bundle.h"
#include "newscls/core/error.h"
#include "newscls/core/feed.h"
#include "newscls/core/parallel.h"
#include "newscls/core/record_reader.h"
#include "newscls/workflow/registry.h"
#include "workflow/answers_file.h"
#include "workflow/ask_selection.h"
#include "workflow/audit_file.h"
#include "workflow/self_training_rounds.h"

namespace fs = std::filesystem;

namespace newscls {
namespace {

constexpr const char* kHeader = "title,label,suggested,score";

// Before any work: --out names a file ask may write, none of the files it reads, in a folder it
// can write to (made if missing).
void check_out(const AskRequest& r) {
  if (written_in_place(r.out)) return;
  refuse_folder_spelling("--out", r.out);
  if (std::error_code ec; fs::is_directory(r.out, ec))
    throw UsageError("--out " + r.out + " is a folder: name the CSV file to write");
  if (is_bundle_file(r.out)) throw UsageError("--out " + r.out + " is a file of a model bundle; name another file");
  refuse_output_over_input(r.out, r.unlabeled);
  for (const std::string& answers : r.label_files) {
    if (same_file(r.out, answers)) {
      throw UsageError("--out " + r.out + " is a --labels file, whose answers would be lost; name another file");
    }
  }
  const std::string parent = fs::path(r.out).parent_path().string();
  const std::string folder = parent.empty() ? "." : parent;
  make_directories(folder);
  if (::access(folder.c_str(), W_OK) != 0) {
    throw IoError(folder, "cannot write --out " + r.out + " there (no permission, or a read-only disk)");
  }
}

void check_budget(std::size_t budget, std::size_t unanswered, std::size_t feed_titles) {
  const std::string counts =
      std::to_string(unanswered) + " distinct titles not yet answered (of " + std::to_string(feed_titles) + ")";
  if (budget == 0) throw UsageError("--budget 0: ask for at least one title; the feed holds " + counts);
  if (budget > unanswered) {
    throw UsageError("--budget " + std::to_string(budget) + " is more than the feed's " + counts);
  }
}

std::string ask_csv(const std::vector<AskPick>& picks, const std::vector<std::string>& titles,
                    const std::vector<std::string>& classes) {
  std::string out = std::string(kHeader) + "\n";
  char score[32];
  for (const AskPick& p : picks) {
    std::snprintf(score, sizeof score, "%.6f", p.score);
    const std::string suggested = p.suggested < 0 ? "" : classes[static_cast<std::size_t>(p.suggested)];
    out += csv_field(audit_title(titles[p.index])) + ",," + csv_field(suggested) + "," + score + "\n";
  }
  return out;
}

}  // namespace

const std::vector<std::string>& ask_strategy_names() {
  static const std::vector<std::string> names = {"active", "random"};
  return names;
}

AskOutcome run_ask(const AskRequest& r) {
  if (r.strategy != "active" && r.strategy != "random")
    throw UsageError("--strategy " + r.strategy + ": expected active or random");
  check_out(r);
  const Bundle bundle = Bundle::open(r.model_dir);
  FeedOptions feed_options;
  feed_options.seed = r.seed;
  feed_options.skip_bad_lines = r.skip_bad_lines;
  const Feed feed = read_feed(r.unlabeled, feed_options);
  const LabelSet labels{bundle.manifest().labels};
  const std::unordered_set<std::string> feed_titles(feed.titles.begin(), feed.titles.end());
  const std::unordered_set<std::string> answered =
      read_answer_files(r.label_files, r.label_format, labels, feed_titles).titles();
  std::vector<std::string> candidates;
  for (const std::string& title : feed.titles) {
    if (answered.count(title) == 0) candidates.push_back(title);
  }
  check_budget(r.budget, candidates.size(), feed.titles.size());

  auto model = load_classifier(bundle);
  model->set_threads(given_thread_count(r.threads));
  std::vector<std::vector<float>> probs;
  for (Prediction& p : predict_feed(*model, candidates)) probs.push_back(std::move(p.probs));
  const std::vector<AskPick> picks =
      r.strategy == "random" ? pick_random(probs, r.budget, r.seed) : pick_active(candidates, probs, r.budget);
  write_file_atomic(r.out, ask_csv(picks, candidates, labels.names));
  spdlog::info("asked {} of the feed's {} titles not yet answered ({}): {}", picks.size(), candidates.size(),
               r.strategy, r.out == "-" ? "standard output" : r.out);
  return {feed.titles.size(), feed.titles.size() - candidates.size(), picks.size()};
}

}  // namespace newscls
