#include <cstdio>
#include <filesystem>
#include <memory>

#include "commands.h"
#include "common_options.h"
#include "newscls/core/bundle.h"
#include "newscls/workflow/registry.h"

namespace newscls::app {

void setup_info(CLI::App& app) {
  auto model_dir = std::make_shared<std::string>();
  auto defaults_of = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "info", "Verify a model bundle (checksums, family, config, payloads) and print its manifest as JSON");
  add_model_dir_option(*cmd, *model_dir);
  // Required unless --defaults is given, which needs no bundle.
  CLI::Option* model_dir_option = cmd->get_option("--model-dir")->required(false);
  cmd->add_option("--defaults", *defaults_of,
                  "Print a family's default config instead, each key with its doc and accepted values (what "
                  "configs/<family>.json holds; scripts/gen_configs.sh writes them from it)")
      ->check(CLI::IsMember(known_families()))
      ->excludes(model_dir_option);
  cmd->callback([model_dir, defaults_of] {
    if (!defaults_of->empty()) {
      std::printf("%s\n", find_family(*defaults_of).documented_config().dump(2).c_str());
      return;
    }
    if (model_dir->empty()) throw CLI::RequiredError("--model-dir");
    const Bundle bundle = Bundle::open(*model_dir);
    // The family must exist and check the bundle as fully as loading it would.
    verify_bundle(bundle);
    nlohmann::json j = manifest_to_json(bundle.manifest());
    for (auto& [name, payload] : j["payloads"].items()) {
      payload["bytes"] = std::filesystem::file_size(bundle.payload_path(name));
    }
    j["bundle_bytes"] = bundle.total_bytes();  // a cascade's members included
    j["verified"] = true;
    std::printf("%s\n", j.dump(2).c_str());
  });
}

}  // namespace newscls::app
