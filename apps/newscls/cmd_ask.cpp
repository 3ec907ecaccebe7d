#include <charconv>
#include <memory>
#include <string>

#include "commands.h"
#include "common_options.h"
#include "newscls/workflow/ask_workflow.h"

namespace newscls::app {
namespace {

const CLI::Validator& whole_number() {
  static const CLI::Validator digits(
      [](std::string& s) -> std::string {
        std::size_t v = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        return s.empty() || ec != std::errc() || end != s.data() + s.size() ? "a whole number from 0 expected" : "";
      },
      "UINT");
  return digits;
}

}  // namespace

void setup_ask(CLI::App& app) {
  auto request = std::make_shared<AskRequest>();
  CLI::App* cmd = app.add_subcommand("ask",
                                     "Pick the titles of your feed whose labels would teach the model most, and write "
                                     "them to a CSV for you to answer (then adapt --labels)");
  add_model_dir_option(*cmd, request->model_dir);
  const RenamedOption unlabeled = add_unlabeled_option(
      *cmd, request->unlabeled, "your own feed, the titles to choose from ('-' = stdin; required)", /*required=*/true);
  cmd->add_option("--budget", request->budget, "How many titles to ask (distinct, none already in a --labels file)")
      ->required()
      ->check(whole_number());  // "-1" would otherwise read as 2^64-1
  cmd->add_option(
         "--out", request->out,
         "CSV to write (atomically; - = stdout): title,label,suggested,score with label empty, for you to fill "
         "in with a class name or none")
      ->required()
      ->check(non_empty_path());
  add_answer_options(*cmd, request->label_files, request->label_format,
                     "Answers you gave before: their titles, answered or skipped, are not asked again (repeatable)");
  cmd->add_option("--strategy", request->strategy,
                  "active: titles the model is torn between two classes on, spread over the classes, near-duplicates "
                  "left out; random: a seeded uniform draw")
      ->capture_default_str()
      ->check(CLI::IsMember(ask_strategy_names()));
  add_run_options(*cmd, request->seed, request->threads, request->skip_bad_lines);
  cmd->callback([request, unlabeled] {
    unlabeled.check();
    run_ask(*request);
  });
}

}  // namespace newscls::app
