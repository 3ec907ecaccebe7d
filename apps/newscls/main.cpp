// newscls: classify Chinese news titles with four model families of rising cost and power.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "commands.h"
#include "newscls/core/error.h"
#include "newscls/core/exit_codes.h"
#include "newscls/core/interrupt.h"

namespace {

using newscls::kExitError;
using newscls::kExitInterrupted;
using newscls::kExitUsage;

void setup_logging(const std::string& level) {
  auto logger = spdlog::stderr_color_mt("newscls");
  logger->set_pattern("[%H:%M:%S] %^%l%$ %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(level));
}

int report(const newscls::Error& e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  switch (e.kind()) {
    case newscls::ErrorKind::kUsage: return kExitUsage;
    case newscls::ErrorKind::kInterrupted: return kExitInterrupted;
    default: return kExitError;
  }
}

// A command's printed result (info's JSON, eval's table) is its output too: a full disk or a
// closed stdout must fail the command, not leave an empty file behind an exit status of 0.
int finish_stdout(int code) {
  errno = 0;
  if ((std::fflush(stdout) == 0 && !std::ferror(stdout)) || code != 0) return code;  // a failed command said why
  const int err = errno;
  std::fprintf(stderr, "error: standard output: write failed%s%s\n", err ? ": " : "", err ? std::strerror(err) : "");
  return kExitError;
}

// The first word that is not a global option, when it names no subcommand: CLI11 would only
// say "A subcommand is required".
const char* unknown_subcommand(CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--log-level") {
      ++i;
    } else if (arg.empty() || arg[0] != '-') {
      const auto subs = app.get_subcommands([&arg](const CLI::App* s) { return s->get_name() == arg; });
      return subs.empty() ? argv[i] : nullptr;
    }
  }
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"newscls: classify Chinese news titles (TF-IDF + random forest, fastText, BERT, LLM zero-shot)"};
  app.require_subcommand(1);
  app.fallthrough();  // global options such as --log-level may follow the subcommand
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error, critical or off (logs go to stderr)")
      ->capture_default_str()
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  app.parse_complete_callback([&log_level] { setup_logging(log_level); });
  newscls::app::setup_train(app);
  newscls::app::setup_ask(app);
  newscls::app::setup_adapt(app);
  newscls::app::setup_audit(app);
  newscls::app::setup_eval(app);
  newscls::app::setup_predict(app);
  newscls::app::setup_info(app);
  newscls::app::setup_pipeline(app);
  newscls::app::setup_pretrain(app);
  newscls::app::setup_attention(app);
  newscls::app::setup_serve(app);
  newscls::app::setup_import_hf(app);
  newscls::app::setup_embed(app);
  newscls::app::setup_compress(app);
  newscls::install_interrupt_handlers();
  if (const char* word = unknown_subcommand(app, argc, argv)) {
    std::fprintf(stderr, "error: '%s' is no newscls subcommand; `newscls --help` lists them\n", word);
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return finish_stdout(code == 0 ? 0 : kExitUsage);
  } catch (const newscls::Error& e) {
    return finish_stdout(report(e));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return finish_stdout(kExitError);
  }
  return finish_stdout(0);
}
