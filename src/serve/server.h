// `newscls serve`: classify titles over HTTP/1.1 on cpp-httplib (Debian's libcpp-httplib).
//
//   POST /v1/classify  {"titles": [...], "top_k": 3, "model": "<name>"}  -> results
//   GET  /v1/models    names, families, labels, the manifests' test metrics
//   GET  /healthz      200 once the bundles are loaded, 503 while loading
//   GET  /metrics      Prometheus text format
//
// Errors are {"error": {"code", "message"}} with 400, 404, 405, 411, 413, 415 or 503
// (a full queue). One access-log line per request goes to spdlog (stderr), without the
// titles unless log_titles is set. Signals are the caller's business: this class installs
// no handler; the app calls reload() on SIGHUP and shutdown() on SIGTERM.
//
//   Server server(options);
//   int port = server.start();   // listening; /healthz answers 503
//   server.load();               // throws when a bundle cannot be loaded
//   ... server.reload();         // all bundles or none: a broken one keeps the old set
//   server.shutdown();           // stop accepting, answer requests in flight, stop
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "serve/models.h"

namespace newscls::serve {

struct ServeRequest {
  std::vector<std::string> model_dirs;
  std::string host = "127.0.0.1";
  int port = 8080;             // 0: any free port (start() returns it)
  int threads = 1;             // for each model's forward pass; resolved (>= 1)
  int connections = 64;        // connections served at once (HTTP worker threads)
  std::size_t max_batch = 64;  // titles per forward pass
  int max_wait_ms = 5;         // how long a request may wait for a batch to fill
  std::size_t max_body_bytes = 1048576;
  std::size_t max_titles = 1024;  // per request
  std::size_t queue = 256;        // requests waiting per model before 503
  int read_timeout_s = 5;         // a client silent this long mid-request is dropped
  int body_timeout_s = 30;        // a body must arrive within this long of its head
  bool log_titles = false;
};

class Server {
 public:
  explicit Server(ServeRequest options, ModelLoader loader = load_bundle);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and starts answering; returns the port. Throws IoError when it cannot bind.
  int start();
  void load();
  // Loads every bundle again; swaps them in and returns true only if all loaded.
  bool reload();
  // Idempotent; the destructor calls it.
  void shutdown();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace newscls::serve
