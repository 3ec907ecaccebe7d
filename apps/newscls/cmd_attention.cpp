#include <cstdio>
#include <filesystem>
#include <memory>

#include <spdlog/spdlog.h>

#include "commands.h"
#include "common_options.h"
#include "newscls/atomic_file.h"
#include "newscls/bundle.h"
#include "newscls/classifier.h"
#include "newscls/data.h"
#include "newscls/error.h"
#include "newscls/parallel.h"
#include "newscls/registry.h"
#include "newscls/workflow.h"

namespace newscls::app {

namespace fs = std::filesystem;
namespace {

struct AttentionOptions {
  std::string model_dir, input, out_dir;
  std::size_t limit = 0;
  int threads = 0;
};

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
  throw UsageError("attention --out " + out + " lies in the model bundle " + outer.string() + "; name a folder outside it, or " +
                   (outer / "attention").string());
}

void run_attention(const AttentionOptions& o) {
  const Bundle bundle = Bundle::open(o.model_dir);
  const Family& family = family_of_bundle(bundle);
  if (!family.has_attention()) throw UsageError("model family '" + family.name() + "' has no attention weights to dump");
  refuse_out_in_bundle(o.out_dir);
  auto model = load_classifier(bundle);
  model->set_threads(resolve_thread_count(o.threads));
  std::vector<std::string> titles;
  TitleReader reader(o.input);
  std::string title;
  while ((o.limit == 0 || titles.size() < o.limit) && reader.next(title)) titles.push_back(title);
  dump_attention_into(*model, titles, o.out_dir);
  spdlog::info("attention of {} titles written to {}", titles.size(), o.out_dir);
  if (titles.empty()) {
    std::printf("0 titles: nothing dumped, and %s holds no dump now\n", o.out_dir.c_str());
  } else {
    std::printf("%zu titles: %s/{0..%zu}.{json,npy,html}\n", titles.size(), o.out_dir.c_str(), titles.size() - 1);
  }
}

}  // namespace

void setup_attention(CLI::App& app) {
  auto o = std::make_shared<AttentionOptions>();
  CLI::App* cmd = app.add_subcommand(
      "attention", "Write attention weights of each input title as i.json, i.npy and i.html (families with attention)");
  add_model_dir_option(*cmd, o->model_dir);
  cmd->add_option("--input", o->input, "Titles, one per line (title<TAB>label accepted; - = stdin)")->required()->check(non_empty_path());
  cmd->add_option("--out", o->out_dir, "Directory for the dumps")->required()->check(non_empty_path());
  cmd->add_option("--limit", o->limit, "Only the first N titles (0 = all)")->capture_default_str();
  add_threads_option(*cmd, o->threads);
  cmd->callback([o] { run_attention(*o); });
}

}  // namespace newscls::app
