// `newscls serve`: the signal handling lives here; the server itself is src/serve.
#include <malloc.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <memory>
#include <thread>

#include <spdlog/spdlog.h>

#include "commands.h"
#include "common_options.h"
#include "newscls/core/exit_codes.h"
#include "serve/server.h"

namespace newscls::app {
namespace {

// Set by the handlers, read by the loop in run_serve: the only state a handler may touch.
volatile std::sig_atomic_t g_stop = 0;
volatile std::sig_atomic_t g_reload = 0;

// The first SIGINT/SIGTERM drains; a second one, while a drain waits (on a slow LLM, say),
// stops at once, as the user asked twice.
void on_stop(int) {
  if (g_stop) {
    static const char kMessage[] = "newscls serve: second signal: stopping now, requests in flight are dropped\n";
    [[maybe_unused]] const ssize_t written = write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
    _exit(kExitInterrupted);  // as any other newscls command interrupted
  }
  g_stop = 1;
}
void on_reload(int) { g_reload = 1; }

// Replaces main's SIGINT/SIGTERM handlers: those make long loops throw InterruptedError,
// and a drain must let the predictions in flight finish instead.
void install_serve_signals() {
  struct sigaction action {};
  sigemptyset(&action.sa_mask);
  action.sa_handler = on_stop;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  action.sa_handler = on_reload;
  sigaction(SIGHUP, &action, nullptr);
  std::signal(SIGPIPE, SIG_IGN);  // a client gone mid-response is the socket's error, not ours
}

void run_serve(serve::ServeRequest options) {
  // Read by OpenBLAS when a plugin loads it (in server.load() below). Parallelism comes from
  // --threads (a model may split a batch over them); OpenBLAS's own threads, waiting on each
  // other on a busy machine, made a one-title forward pass cost 41 ms of CPU instead of 0.96
  // (scripts/bench/bench_bert_forward.sh). The caller's setting wins.
  setenv("OPENBLAS_NUM_THREADS", "1", /*overwrite=*/0);
  install_serve_signals();
  // glibc gives each busy thread its own arena and keeps what it freed; with dozens of
  // connection threads, 10,000 hostile requests grew RSS by 27% (then stayed), with 2 by 6.5%.
  mallopt(M_ARENA_MAX, 2);
  serve::Server server(options);
  server.start();
  server.load();
  spdlog::info(
      "ready: {} model(s); SIGHUP reloads them, SIGTERM or SIGINT drains and stops (a second one stops at once)",
      options.model_dirs.size());
  while (!g_stop) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (g_reload) {
      g_reload = 0;
      spdlog::info("SIGHUP: reloading the bundles");
      server.reload();
    }
  }
  spdlog::info("stopping: answering the requests in flight (SIGTERM or SIGINT again stops at once)");
  server.shutdown();
  spdlog::info("stopped");
}

}  // namespace

void setup_serve(CLI::App& app) {
  auto o = std::make_shared<serve::ServeRequest>();
  CLI::App* cmd = app.add_subcommand("serve", "Classify titles over HTTP (POST /v1/classify), with micro-batching");
  cmd->footer(
      "Signals: SIGHUP reloads the bundles (all or none); SIGTERM or SIGINT stops accepting,\n"
      "answers the requests in flight and exits 0; a second one during that drain stops at once, exit 130.");
  cmd->add_option("--model-dir", o->model_dirs, "Model bundle to serve, named after its directory (repeatable)")
      ->required();
  cmd->add_option("--host", o->host, "Address to listen on")->capture_default_str();
  cmd->add_option("--port", o->port, "Port (0 = any free port, logged)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  add_thread_count_option(*cmd, "--threads", o->threads, "Threads for each model's forward pass (0 = all cores)",
                          o->threads);
  cmd->add_option("--connections", o->connections, "Connections served at once (HTTP worker threads)")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--max-batch", o->max_batch, "Most titles in one forward pass")
      ->capture_default_str()
      ->check(CLI::Range(1, 65536));
  cmd->add_option("--max-wait-ms", o->max_wait_ms, "Longest a request waits for its batch to fill")
      ->capture_default_str()
      ->check(CLI::Range(0, 10000));
  cmd->add_option("--max-body-bytes", o->max_body_bytes, "Largest request body (413 above)")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{64}, std::size_t{1} << 30));
  cmd->add_option("--max-titles", o->max_titles, "Most titles in one request (413 above)")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
  cmd->add_option("--queue", o->queue, "Requests waiting per model before 503")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
  cmd->add_option("--read-timeout", o->read_timeout_s, "Seconds a client may stay silent mid-request")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600));
  cmd->add_option("--body-timeout", o->body_timeout_s, "Seconds a request body may take to arrive in full (408 after)")
      ->capture_default_str()
      ->check(CLI::Range(1, 86400));
  cmd->add_flag("--log-titles", o->log_titles, "Put the titles in the access log (off: logs carry counts only)");
  cmd->callback([o] { run_serve(*o); });
}

}  // namespace newscls::app
