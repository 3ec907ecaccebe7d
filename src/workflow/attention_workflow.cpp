#include "newscls/workflow/attention_workflow.h"

#include <filesystem>
#include <vector>

#include <spdlog/spdlog.h>

#include "newscls/core/bundle.h"
#include "newscls/core/data.h"
#include "newscls/core/error.h"
#include "newscls/core/parallel.h"
#include "newscls/workflow/eval_workflow.h"
#include "newscls/workflow/registry.h"

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

std::vector<std::string> read_titles(const std::string& input, std::size_t limit) {
  std::vector<std::string> titles;
  TitleReader reader(input);
  std::string title;
  while ((limit == 0 || titles.size() < limit) && reader.next(title)) titles.push_back(title);
  return titles;
}

}  // namespace

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
