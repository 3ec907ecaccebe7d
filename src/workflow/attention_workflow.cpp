#include "newscls/workflow/attention_workflow.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <vector>

#include <spdlog/spdlog.h>

#include "newscls/core/atomic_file.h"
#include "newscls/core/bundle.h"
#include "newscls/core/bundle_files.h"
#include "newscls/core/data.h"
#include "newscls/core/error.h"
#include "newscls/core/interrupt.h"
#include "newscls/core/parallel.h"
#include "newscls/workflow/registry.h"
#include "workflow/staging_folder.h"

namespace newscls {

namespace fs = std::filesystem;
namespace {

// A bundle inside another (a cascade's member) is a part of the outer one: only the outermost
// bundle's attention/ is a place for dumps.
fs::path outermost_bundle(std::string holder) {
  for (;;) {
    const std::string up = bundle_holding(fs::path(holder).parent_path().string());
    if (up.empty() || up == holder) return holder;  // "/" is its own parent
    holder = up;
  }
}

// Dumps in a bundle's folder (its top, or a subfolder other than attention/, where eval
// --dump-attention writes) are files it does not know: retraining the bundle refuses them.
void refuse_out_in_bundle(const std::string& out) {
  const std::string holder = bundle_holding(out);
  if (holder.empty()) return;
  const fs::path outer = outermost_bundle(holder);
  std::error_code ec;
  if (fs::weakly_canonical(fs::absolute(out, ec), ec) == outer / "attention") return;
  throw UsageError("attention --out " + out + " lies in the model bundle " + outer.string() +
                   "; name a folder outside it, or " + (outer / "attention").string());
}

void dump_through_staging(Classifier& model, const std::vector<std::string>& titles, const std::string& dir) {
  const std::size_t before = dumped_titles(dir);
  // Moved into place only when all are written: an interrupted run leaves the earlier dump.
  const StagingFolder staging(dir, kDumpStagingPrefix);
  constexpr std::size_t kChunk = 16;  // a title's dump takes milliseconds: SIGINT is seen at once
  for (std::size_t first = 0; first < titles.size(); first += kChunk) {
    check_interrupted();
    const auto end = titles.begin() + static_cast<std::ptrdiff_t>(std::min(titles.size(), first + kChunk));
    model.dump_attention({titles.begin() + static_cast<std::ptrdiff_t>(first), end}, first, staging.path(), {});
  }
  sync_tree(staging.path());
  // The files move one by one: until the last has, the index says the folder is a mix (and
  // covers both dumps' files, which the next run may then replace).
  write_file_atomic(dir + "/" + kDumpIndexFile,
                    nlohmann::json{{"titles", std::max(before, titles.size())}, {"complete", false}}.dump() + "\n");
  for (const fs::directory_entry& entry : fs::directory_iterator(staging.path())) {
    fs::rename(entry.path(), fs::path(dir) / entry.path().filename());
  }
  // Only what the index says an earlier dump wrote: other files in the folder are the user's.
  std::vector<fs::path> stale;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    const std::optional<std::size_t> index = dump_file_index(entry.path().filename().string());
    // A folder of that name is not the dump's (it writes files): left, as the bundle's checks leave it to the user.
    if (index && *index >= titles.size() && *index < before && !entry.is_directory()) stale.push_back(entry.path());
  }
  for (const fs::path& path : stale) fs::remove(path);
  write_file_atomic(dir + "/" + kDumpIndexFile, nlohmann::json{{"titles", titles.size()}}.dump() + "\n");
}

std::vector<std::string> read_titles(const std::string& input, std::size_t limit) {
  std::vector<std::string> titles;
  TitleReader reader(input);
  std::string title;
  while ((limit == 0 || titles.size() < limit) && reader.next(title)) titles.push_back(title);
  return titles;
}

}  // namespace

// Before the work: a file a dump of n titles would replace that no earlier dump wrote (by
// dir's index) is the user's own, and a folder where it writes a file cannot be replaced.
void refuse_dump_over_others(const std::string& dir, std::size_t n) {
  const std::size_t before = dumped_titles(dir);
  for (std::size_t i = 0; i < n; ++i) {
    for (const char* extension : kDumpExtensions) {
      const fs::path target = fs::path(dir) / (std::to_string(i) + extension);
      std::error_code ec;
      const fs::file_status status = fs::symlink_status(target, ec);
      if (!fs::exists(status)) continue;
      if (fs::is_directory(status)) {
        throw IoError(target.string(), "is a folder where the dump writes a file; move it, or choose another --out");
      }
      if (i >= before) {
        throw IoError(target.string(), std::string("was not written by an earlier dump into ") + dir + " (by its " +
                                           kDumpIndexFile +
                                           "); the dump would replace it: move it, or choose another --out");
      }
    }
  }
}

void dump_attention_into(Classifier& model, const std::vector<std::string>& titles, const std::string& dir) {
  refuse_dotdot_through_missing("attention folder " + dir, dir);
  refuse_dump_over_others(dir, titles.size());
  std::error_code ec;
  const bool made = !fs::exists(dir, ec);
  make_directories(dir);
  try {
    dump_through_staging(model, titles, dir);
  } catch (...) {
    if (made) fs::remove(dir, ec);  // the folder this run made, empty again once its staging is gone
    throw;
  }
}

std::size_t run_attention(const AttentionRequest& r) {
  const Bundle bundle = Bundle::open(r.model_dir);
  const Family& family = family_of_bundle(bundle);
  if (!family.has_attention())
    throw UsageError("model family '" + family.name() + "' has no attention weights to dump");
  refuse_out_in_bundle(r.out_dir);
  auto model = load_classifier(bundle);
  model->set_threads(given_thread_count(r.threads));
  const std::vector<std::string> titles = read_titles(r.input, r.limit);
  dump_attention_into(*model, titles, r.out_dir);
  spdlog::info("attention of {} titles written to {}", titles.size(), r.out_dir);
  return titles.size();
}

}  // namespace newscls
