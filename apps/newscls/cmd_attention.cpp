#include <cstdio>
#include <memory>

#include "commands.h"
#include "common_options.h"
#include "newscls/workflow/attention_workflow.h"

namespace newscls::app {
namespace {

void print_attention(const AttentionRequest& r, std::size_t titles) {
  if (titles == 0) {
    std::printf("0 titles: nothing dumped, and %s holds no dump now\n", r.out_dir.c_str());
  } else {
    std::printf("%zu titles: %s/{0..%zu}.{json,npy,html}\n", titles, r.out_dir.c_str(), titles - 1);
  }
}

}  // namespace

void setup_attention(CLI::App& app) {
  auto r = std::make_shared<AttentionRequest>();
  CLI::App* cmd = app.add_subcommand(
      "attention", "Write attention weights of each input title as i.json, i.npy and i.html (families with attention)");
  add_model_dir_option(*cmd, r->model_dir);
  add_titles_input_option(*cmd, r->input);
  cmd->add_option("--out", r->out_dir, "Directory for the dumps")->required()->check(non_empty_path());
  cmd->add_option("--limit", r->limit, "Only the first N titles (0 = all)")->capture_default_str();
  add_threads_option(*cmd, r->threads);
  cmd->callback([r] { print_attention(*r, run_attention(*r)); });
}

}  // namespace newscls::app
