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
// --seed, --threads and --skip-bad-lines, in that order: what every command that reads
// labelled data and trains or scores takes.
void add_run_options(CLI::App& cmd, std::uint64_t& seed, int& threads, bool& skip_bad_lines);
void add_model_dir_option(CLI::App& cmd, std::string& model_dir);
// --input FILE (required): titles, one per line, for the commands that read an encoder's view of them.
void add_titles_input_option(CLI::App& cmd, std::string& input);

// An option's old name, kept hidden for one release after a rename: it sets the same value.
// check(), in the command's callback (logging is set up by then), refuses both names at once,
// warns of the old one, and refuses neither when the option is required (CLI11's own
// required() would not count the old name).
struct RenamedOption {
  const CLI::Option* current;
  const CLI::Option* old;
  std::string command, old_name;
  bool required = false;
  void check() const;
};
RenamedOption add_old_option_name(CLI::App& cmd, const CLI::Option* current, const std::string& old_name,
                                  std::string& value);

// --unlabeled FILE: titles without labels, one per line; `use` says what the command does with
// them (and whether '-' reads stdin; `use` says "required" too when `required`). --unlabelled,
// compress's old spelling, is a hidden alias.
RenamedOption add_unlabeled_option(CLI::App& cmd, std::string& feed, const std::string& use, bool required = false);
// --unlabeled's companions: --teacher, --rounds, --min-confidence, --share-tolerance, ...
void add_self_training_options(CLI::App& cmd, SelfTraining& settings, std::vector<std::string>& teachers);
// --labels (repeatable: the reader's answers to `newscls ask`) and how they are read:
// --labels-format, --labels-text-column, --labels-label-column.
void add_answer_options(CLI::App& cmd, std::vector<std::string>& files, FormatOptions& format, const std::string& help);
// --world-size, --rank, --master-addr, --master-port, --dist-timeout, each defaulting to
// torchrun's environment variable (WORLD_SIZE, RANK, MASTER_ADDR, MASTER_PORT).
void add_distributed_options(CLI::App& cmd, DistributedSettings& d);

}  // namespace newscls::app
