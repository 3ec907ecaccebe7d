#include "common_options.h"

namespace newscls::app {

void add_data_option(CLI::App& cmd, std::string& data_dir) {
  cmd.add_option("--data", data_dir,
                 "Data directory with train/dev/test.txt and class.txt "
                 "(default: $NEWSCLS_DATA, else data/thucnews, else ../shared/data/thucnews)");
}

void add_seed_option(CLI::App& cmd, std::uint64_t& seed) {
  cmd.add_option("--seed", seed, "Random seed")->capture_default_str();
}

void add_threads_option(CLI::App& cmd, int& threads) {
  cmd.add_option("--threads", threads, "Worker threads (0 = all cores)")->capture_default_str()->check(CLI::NonNegativeNumber);
}

void add_skip_bad_lines_option(CLI::App& cmd, bool& skip) {
  cmd.add_flag("--skip-bad-lines", skip, "Skip malformed data lines (counted in the log and metrics.json) instead of stopping");
}

void add_model_dir_option(CLI::App& cmd, std::string& model_dir) {
  cmd.add_option("--model-dir", model_dir, "Model bundle directory written by `newscls train`")->required();
}

}  // namespace newscls::app
