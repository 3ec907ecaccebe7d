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

void add_distributed_options(CLI::App& cmd, DistributedSettings& d) {
  const char* group = "Distributed (data-parallel over processes)";
  cmd.add_option("--world-size", d.world_size, "Number of ranks (processes) training together")
      ->envname("WORLD_SIZE")->capture_default_str()->check(CLI::PositiveNumber)->group(group);
  cmd.add_option("--rank", d.rank, "This process's rank, 0..world-size-1; rank 0 writes the outputs")
      ->envname("RANK")->capture_default_str()->check(CLI::NonNegativeNumber)->group(group);
  cmd.add_option("--master-addr", d.master_addr, "Address of rank 0, where the ranks meet")
      ->envname("MASTER_ADDR")->capture_default_str()->group(group);
  cmd.add_option("--master-port", d.master_port, "TCP port of the rendezvous store on rank 0")
      ->envname("MASTER_PORT")->capture_default_str()->check(CLI::Range(1, 65535))->group(group);
  cmd.add_option("--dist-timeout", d.timeout_s, "Seconds after which a silent rank is reported lost")
      ->capture_default_str()->check(CLI::PositiveNumber)->group(group);
}

void add_skip_bad_lines_option(CLI::App& cmd, bool& skip) {
  cmd.add_flag("--skip-bad-lines", skip, "Skip malformed data lines (counted in the log and metrics.json) instead of stopping");
}

void add_model_dir_option(CLI::App& cmd, std::string& model_dir) {
  cmd.add_option("--model-dir", model_dir, "Model bundle directory written by `newscls train`")->required();
}

}  // namespace newscls::app
