#include <memory>

#include "commands.h"
#include "common_options.h"
#include "newscls/workflow/encoder_workflow.h"

namespace newscls::app {

void setup_embed(CLI::App& app) {
  auto r = std::make_shared<EmbedRequest>();
  CLI::App* cmd = app.add_subcommand(
      "embed", "Write each title's [CLS] vector and pooler output as a JSON line (models with an encoder)");
  add_model_dir_option(*cmd, r->model_dir);
  add_titles_input_option(*cmd, r->input);
  cmd->add_option("--output", r->output, "JSON lines file (written atomically), or - for stdout")
      ->capture_default_str()
      ->check(non_empty_path());
  add_threads_option(*cmd, r->threads);
  cmd->callback([r] { run_embed(*r); });
}

}  // namespace newscls::app
