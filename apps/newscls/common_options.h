// Options shared by several subcommands, declared once with their defaults and help.
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "newscls/workflow/train_workflow.h"

#include "newscls/core/classifier.h"
#include "newscls/core/record_reader.h"

namespace newscls::app {

// A path option given as "": refused, not read as "the default" (eval --out "" wrote into
// the bundle) or as a file named "".
const CLI::Validator& non_empty_path();
CLI::Option* add_data_option(CLI::App& cmd, std::string& data_dir);
// --format, --text-column, --label-column: how a labelled file is read.
void add_format_options(CLI::App& cmd, FormatOptions& format);
// --train, --dev, --test, --classes, --dev-fraction and the format options, in a group of
// their own; --train excludes data (--data), and --dev, --test and --classes need --train.
void add_data_files_options(CLI::App& cmd, DataFiles& files, CLI::Option* data);
void add_seed_option(CLI::App& cmd, std::uint64_t& seed);
void add_min_score_option(CLI::App& cmd, double& min_score, const std::string& help);
// A thread count option resolved where it is parsed: `threads` gets default_count when the
// option is not given, and the core count for 0 (resolve_thread_count), so it reaches the
// library resolved.
CLI::Option* add_thread_count_option(CLI::App& cmd, const std::string& name, int& threads, const std::string& help,
                                     int default_count);
void add_threads_option(CLI::App& cmd, int& threads);
void add_skip_bad_lines_option(CLI::App& cmd, bool& skip);
void add_model_dir_option(CLI::App& cmd, std::string& model_dir);
// --unlabeled's companions: --teacher, --rounds, --min-confidence, --share-tolerance, ...
void add_self_training_options(CLI::App& cmd, SelfTraining& settings, std::vector<std::string>& teachers);
// --world-size, --rank, --master-addr, --master-port, --dist-timeout, each defaulting to
// torchrun's environment variable (WORLD_SIZE, RANK, MASTER_ADDR, MASTER_PORT).
void add_distributed_options(CLI::App& cmd, DistributedSettings& d);

}  // namespace newscls::app
