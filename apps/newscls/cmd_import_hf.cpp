#include <cstdio>
#include <memory>

#include <spdlog/spdlog.h>

#include "commands.h"
#include "common_options.h"
#include "newscls/workflow/encoder_workflow.h"

namespace newscls::app {

void setup_import_hf(CLI::App& app) {
  auto r = std::make_shared<ImportContext>();
  r->format = "huggingface-bert";
  CLI::App* cmd = app.add_subcommand(
      "import-hf", "Turn a Hugging Face BERT folder (config.json, vocab.txt, model.safetensors) into a bundle");
  CLI::Option* hf_dir = cmd->add_option("--hf-dir", r->model_dir, "The Hugging Face folder (save_pretrained's output)")
                            ->check(non_empty_path());
  // --model-dir names a bundle everywhere else: this folder is not one.
  const RenamedOption old = add_old_option_name(*cmd, hf_dir, "--model-dir", r->model_dir);
  cmd->add_option("--out", r->out_dir, "Bundle directory to write")->required()->check(non_empty_path());
  cmd->callback([r, old] {
    old.check();
    if (r->model_dir.empty()) throw CLI::RequiredError("--hf-dir");
    const nlohmann::json facts = import_checkpoint(*r);
    spdlog::info("imported {} into {}", r->model_dir, r->out_dir);
    std::printf("%s\n", facts.dump().c_str());
  });
}

}  // namespace newscls::app
