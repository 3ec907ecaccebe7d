#include "common_options.h"

#include <charconv>
#include <cstdlib>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "newscls/core/data.h"
#include "newscls/core/error.h"
#include "newscls/core/parallel.h"

namespace newscls::app {

const CLI::Validator& non_empty_path() {
  static const CLI::Validator v([](std::string& s) { return s.empty() ? std::string("an empty path") : std::string(); },
                                "PATH");
  return v;
}

CLI::Option* add_data_option(CLI::App& cmd, std::string& data_dir) {
  return cmd
      .add_option("--data", data_dir,
                  std::string("Data directory with train/dev/test.txt and class.txt (default: $NEWSCLS_DATA, "
                              "else ") +
                      kFullDataDir + ", else the demo set " + kDemoDataDir + ")")
      ->check(non_empty_path());  // --data "$UNSET" must not fall back to other data
}

namespace {

const CLI::Validator& non_empty_name() {
  static const CLI::Validator v([](std::string& s) { return s.empty() ? std::string("an empty name") : std::string(); },
                                "NAME");
  return v;
}

}  // namespace

void add_format_options(CLI::App& cmd, FormatOptions& format) {
  const char* group = "Labelled files (docs/DATA_FORMATS.md)";
  cmd.add_option(
         "--format", format.format,
         "Format of the labelled files: tsv (title<TAB>label), csv (with a header), jsonl, fasttext "
         "(__label__NAME title) (default: by extension: .tsv/.txt, .csv, .jsonl/.json, .ft/.fasttext; else tsv)")
      ->check(CLI::IsMember(data_format_names()))
      ->group(group);
  cmd.add_option("--text-column", format.text_column, "CSV column or JSON key holding the title")
      ->capture_default_str()
      ->check(non_empty_name())
      ->group(group);
  cmd.add_option("--label-column", format.label_column, "CSV column or JSON key holding the label (a class name or id)")
      ->capture_default_str()
      ->check(non_empty_name())
      ->group(group);
}

void add_answer_options(CLI::App& cmd, std::vector<std::string>& files, FormatOptions& format,
                        const std::string& help) {
  const char* group = "Answers (docs/CLI.md, ask)";
  CLI::Option* labels = cmd.add_option("--labels", files, help)->check(non_empty_path())->group(group);
  cmd.add_option("--labels-format", format.format,
                 "Format of the --labels files: csv, tsv, jsonl, fasttext (default: by extension)")
      ->check(CLI::IsMember(data_format_names()))
      ->needs(labels)
      ->group(group);
  cmd.add_option("--labels-text-column", format.text_column, "CSV column or JSON key of the --labels files' title")
      ->capture_default_str()
      ->check(non_empty_name())
      ->needs(labels)
      ->group(group);
  cmd.add_option("--labels-label-column", format.label_column,
                 "CSV column or JSON key of the --labels files' answer (a class name, none, or empty: skipped)")
      ->capture_default_str()
      ->check(non_empty_name())
      ->needs(labels)
      ->group(group);
}

void add_data_files_options(CLI::App& cmd, DataFiles& files, CLI::Option* data) {
  const char* group = "Labelled files (docs/DATA_FORMATS.md)";
  CLI::Option* train =
      cmd.add_option("--train", files.train,
                     "Training file in any --format, instead of --data (labels: class names, or ids of --classes)")
          ->check(non_empty_path())
          ->excludes(data)
          ->group(group);
  cmd.add_option("--dev", files.dev, "Dev file (default: a stratified, seeded --dev-fraction of --train)")
      ->check(non_empty_path())
      ->needs(train)
      ->group(group);
  cmd.add_option("--test", files.test, "Test file (default: none; the test figures are then the dev set's)")
      ->check(non_empty_path())
      ->needs(train)
      ->group(group);
  cmd.add_option("--classes", files.classes,
                 "Class list, one name a line, ids from 0 (default: the label names of --train, sorted)")
      ->check(non_empty_path())
      ->needs(train)
      ->group(group);
  cmd.add_option("--dev-fraction", files.dev_fraction, "Share of --train drawn as the dev set when there is no --dev")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 0.999))
      ->needs(train)
      ->group(group);
  add_format_options(cmd, files.format);
}

// CLI11 reads "-1" into an unsigned as 2^64-1 and clamps what overflows: digits only.
void add_seed_option(CLI::App& cmd, std::uint64_t& seed) {
  const CLI::Validator digits(
      [](std::string& s) -> std::string {
        std::uint64_t v = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (s.empty() || ec != std::errc() || end != s.data() + s.size())
          return "a whole number from 0 to 2^64-1 expected";
        return {};
      },
      "UINT64");
  cmd.add_option("--seed", seed, "Random seed")->capture_default_str()->check(digits);
}

// A score in [0, 1]; NaN passes CLI::Range (every comparison with it is false).
void add_min_score_option(CLI::App& cmd, double& min_score, const std::string& help) {
  const CLI::Validator score(
      [](std::string& s) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        if (s.empty() || *end != '\0' || !(v >= 0.0 && v <= 1.0)) return "a score from 0 to 1 expected";
        return {};
      },
      "[0 - 1]");
  cmd.add_option("--min-score", min_score, help)->check(score);
}

// --threads is resolved here, once: 0 (given, or the default when the option is not given)
// becomes the core count, so every layer below takes the count as given.
CLI::Option* add_thread_count_option(CLI::App& cmd, const std::string& name, int& threads, const std::string& help,
                                     int default_count) {
  const CLI::Validator zero_is_all_cores(
      [](std::string& s) {
        if (s == "0") s = std::to_string(resolve_thread_count(0));
        return std::string();
      },
      "");
  return cmd.add_option(name, threads, help)
      ->default_str(std::to_string(default_count))
      ->check(CLI::Range(0, 4096))
      ->transform(zero_is_all_cores)
      ->force_callback();
}

void add_threads_option(CLI::App& cmd, int& threads) {
  add_thread_count_option(cmd, "--threads", threads, "Worker threads (0 = all cores)", 0);
}

namespace {

// CLI11's number checks print a range up to DBL_MAX and never say the value may have come from
// the environment; these name both and refuse what is not a whole number.
CLI::Validator whole_number(long long low, long long high, const std::string& env) {
  return CLI::Validator(
      [low, high, env](std::string& s) -> std::string {
        long long v = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (!s.empty() && ec == std::errc() && end == s.data() + s.size() && v >= low && v <= high) return {};
        return "'" + s + "' is not a whole number from " + std::to_string(low) + " to " + std::to_string(high) +
               (env.empty() ? "" : " (read from the option or from $" + env + ")");
      },
      "");
}

const CLI::Validator& non_empty_address() {
  static const CLI::Validator v(
      [](std::string& s) { return s.empty() ? std::string("an empty address") : std::string(); }, "HOST");
  return v;
}

constexpr long long kMaxRanks = 65536;

// CLI11 takes a variable set to "" for one not set: WORLD_SIZE=$N with N unset would train alone,
// every rank into the same --out. Refused where the variable would be read: not given as an
// option, and MASTER_* only for a distributed run.
void refuse_empty_variables(const std::vector<std::pair<const char*, const CLI::Option*>>& read, bool distributed) {
  for (const auto& [name, option] : read) {
    const char* value = std::getenv(name);
    const bool needed = distributed || std::string(name) == "WORLD_SIZE" || std::string(name) == "RANK";
    if (value != nullptr && *value == '\0' && option->count() == 0 && needed) {
      throw UsageError(std::string("$") + name + " is set but empty; unset it or give it a value");
    }
  }
}

}  // namespace

void add_distributed_options(CLI::App& cmd, DistributedSettings& d) {
  const char* group = "Distributed (data-parallel over processes)";
  CLI::Option* world = cmd.add_option("--world-size", d.world_size, "Number of ranks (processes) training together")
                           ->envname("WORLD_SIZE")
                           ->capture_default_str()
                           ->check(whole_number(1, kMaxRanks, "WORLD_SIZE"))
                           ->group(group);
  CLI::Option* rank =
      cmd.add_option("--rank", d.rank, "This process's rank, 0..world-size-1; rank 0 writes the outputs")
          ->envname("RANK")
          ->capture_default_str()
          ->check(whole_number(0, kMaxRanks - 1, "RANK"))
          ->group(group);
  CLI::Option* addr = cmd.add_option("--master-addr", d.master_addr, "Address of rank 0, where the ranks meet")
                          ->envname("MASTER_ADDR")
                          ->capture_default_str()
                          ->check(non_empty_address())
                          ->group(group);
  CLI::Option* port = cmd.add_option("--master-port", d.master_port, "TCP port of the rendezvous store on rank 0")
                          ->envname("MASTER_PORT")
                          ->capture_default_str()
                          ->check(whole_number(1, 65535, "MASTER_PORT"))
                          ->group(group);
  cmd.add_option("--dist-timeout", d.timeout_s, "Seconds after which a silent rank is reported lost")
      ->capture_default_str()
      ->check(whole_number(1, 86400, ""))
      ->group(group);
  cmd.parse_complete_callback([&d, world, rank, addr, port] {
    refuse_empty_variables({{"WORLD_SIZE", world}, {"RANK", rank}, {"MASTER_ADDR", addr}, {"MASTER_PORT", port}},
                           d.enabled());
  });
}

void add_skip_bad_lines_option(CLI::App& cmd, bool& skip) {
  cmd.add_flag("--skip-bad-lines", skip,
               "Skip malformed data lines or records (counted in the log and metrics.json) instead of stopping");
}

void add_model_dir_option(CLI::App& cmd, std::string& model_dir) {
  cmd.add_option("--model-dir", model_dir, "Model bundle directory written by `newscls train`")->required();
}

void add_run_options(CLI::App& cmd, std::uint64_t& seed, int& threads, bool& skip_bad_lines) {
  add_seed_option(cmd, seed);
  add_threads_option(cmd, threads);
  add_skip_bad_lines_option(cmd, skip_bad_lines);
}

void add_titles_input_option(CLI::App& cmd, std::string& input) {
  cmd.add_option("--input", input, "Titles, one per line (title<TAB>label accepted; - = stdin)")
      ->required()
      ->check(non_empty_path());
}

RenamedOption add_old_option_name(CLI::App& cmd, const CLI::Option* current, const std::string& old_name,
                                  std::string& value) {
  const CLI::Option* old = cmd.add_option(old_name, value)->group("")->check(non_empty_path());
  return {current, old, cmd.get_name(), old_name};
}

void RenamedOption::check() const {
  if (required && current->count() == 0 && old->count() == 0) throw CLI::RequiredError(current->get_name());
  if (old->count() == 0) return;
  const std::string now = current->get_name();
  if (current->count() > 0) {
    throw UsageError(command + " " + old_name + " is the old name of " + now + ": give " + now + " once");
  }
  spdlog::warn("{} {} is now {}; the old name goes in the next release", command, old_name, now);
}

RenamedOption add_unlabeled_option(CLI::App& cmd, std::string& feed, const std::string& use, bool required) {
  const CLI::Option* option =
      cmd.add_option("--unlabeled", feed, "Titles without labels, one per line: " + use)->check(non_empty_path());
  RenamedOption renamed = add_old_option_name(cmd, option, "--unlabelled", feed);
  renamed.required = required;
  return renamed;
}

void add_self_training_options(CLI::App& cmd, SelfTraining& st, std::vector<std::string>& teachers) {
  const char* group = "Adapting to a feed (with --unlabeled)";
  cmd.add_option("--teacher", teachers,
                 "A bundle voting beside the model on the feed: a title is taken when all agree "
                 "(co-training; repeatable)")
      ->group(group);
  cmd.add_option("--rounds", st.rounds,
                 "Self-training rounds at most (0: the feed's vocabulary and pretraining only; default: the "
                 "family's, chosen on dev: docs/BENCHMARKS.md)")
      ->check(CLI::Range(0, 20))
      ->group(group);
  cmd.add_option("--min-confidence", st.min_confidence, "Mean calibrated probability a feed title needs to be taken")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0))
      ->group(group);
  cmd.add_option("--share-tolerance", st.share_tolerance,
                 "A class takes at most this times its share of the labelled titles of the feed titles taken")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 1000.0))
      ->group(group);
  cmd.add_option("--stable-change", st.stable_change, "Stop when fewer than this share of the taken titles changed")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0))
      ->group(group);
  cmd.add_option("--pseudo-copies", st.pseudo_copies, "Each feed title taken counts this many times in training")
      ->capture_default_str()
      ->check(CLI::Range(1, 100))
      ->group(group);
  cmd.add_option("--max-feed-titles", st.max_feed_titles, "A larger feed is sampled (seeded) as it is read")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000000))
      ->group(group);
  cmd.add_flag("!--no-pretraining", st.pretrain, "Do not pretrain the encoder on the feed (bert)")->group(group);
}

}  // namespace newscls::app
