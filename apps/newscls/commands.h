// One setup_* function per subcommand: each declares its options and a callback that
// runs it. Callbacks throw newscls::Error; main maps errors to exit codes.
#pragma once

#include <CLI/CLI.hpp>

namespace newscls::app {

void setup_train(CLI::App& app);
void setup_eval(CLI::App& app);
void setup_predict(CLI::App& app);
void setup_info(CLI::App& app);
void setup_pipeline(CLI::App& app);
void setup_pretrain(CLI::App& app);
void setup_attention(CLI::App& app);
void setup_serve(CLI::App& app);
void setup_import_hf(CLI::App& app);
void setup_embed(CLI::App& app);
void setup_compress(CLI::App& app);
void setup_ask(CLI::App& app);
void setup_adapt(CLI::App& app);
void setup_audit(CLI::App& app);

}  // namespace newscls::app
