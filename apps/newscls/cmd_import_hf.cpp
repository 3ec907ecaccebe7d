#include <cstdio>
#include <memory>

#include <spdlog/spdlog.h>

#include "commands.h"
#include "common_options.h"
#include "newscls/workflow/encoder_workflow.h"

namespace newscls::app {

void setup_import_hf(CLI::App& app) {
  auto r = std::make_shared<ImportRequest>();
  r->format = "huggingface-bert";
  CLI::App* cmd = app.add_subcommand(
      "import-hf", "Turn a Hugging Face BERT folder (config.json, vocab.txt, model.safetensors) into a bundle");
  cmd->add_option("--model-dir", r->model_dir, "The Hugging Face folder (save_pretrained's output)")->required();
  cmd->add_option("--out", r->out_dir, "Bundle directory to write")->required()->check(non_empty_path());
  cmd->callback([r] {
    const nlohmann::json facts = import_checkpoint(*r);
    spdlog::info("imported {} into {}", r->model_dir, r->out_dir);
    std::printf("%s\n", facts.dump().c_str());
  });
}

}  // namespace newscls::app
