#include "serve/server.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <httplib.h>
#include <spdlog/spdlog.h>

#include "newscls/core/error.h"
#include "newscls/core/parallel.h"
#include "serve/api.h"
#include "serve/guarded_server.h"

namespace newscls::serve {
namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kJson = "application/json; charset=utf-8";  // with charset, httplib never compresses it
constexpr const char* kPrometheus = "text/plain; version=0.0.4; charset=utf-8";
// Debian's library is compiled with a listen backlog of 5; Linux raises a listening
// socket's backlog when listen() is called on it again, so many clients can connect at once.
constexpr int kListenBacklog = 1024;
constexpr int kKeepAliveSeconds = 2;
constexpr std::size_t kKeepAliveRequests = 10000;
constexpr std::size_t kMaxHeadBytes = 64 * 1024;  // request line and headers (httplib caps a path at 8 KiB)

// What the access log and metrics need about the request this thread is answering:
// httplib runs pre-routing, the handler and the logger of one request on one thread.
struct RequestTrace {
  bool active = false;
  Clock::time_point start;
  std::string model, error_code, titles_json;
  std::size_t titles = 0;
  bool body_read = false;  // the whole request body was consumed
};
thread_local RequestTrace g_trace;  // per thread, reset for every request

struct Route {
  std::set<std::string> methods;
};

const std::map<std::string, Route>& routes() {
  static const std::map<std::string, Route> r = {{"/v1/classify", {{"POST"}}},
                                                 {"/v1/models", {{"GET", "HEAD"}}},
                                                 {"/healthz", {{"GET", "HEAD"}}},
                                                 {"/metrics", {{"GET", "HEAD"}}}};
  return r;
}

bool has_body(const httplib::Request& req) {
  return req.has_header("Transfer-Encoding") ||
         (req.has_header("Content-Length") && req.get_header_value("Content-Length") != "0");
}

// A header's coding name as compared: without surrounding blanks, in lower case.
std::string coding_name(std::string value) {
  const auto blank = [](char c) { return c == ' ' || c == '\t'; };
  while (!value.empty() && blank(value.back())) value.pop_back();
  value.erase(0, std::min(value.size(), value.find_first_not_of(" \t")));
  std::transform(value.begin(), value.end(), value.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return value;
}

// "chunked", whatever its case and surrounding blanks: the one transfer coding httplib reads.
bool is_chunked_only(const std::string& value) { return coding_name(value) == "chunked"; }

// The content codings httplib decodes (built with zlib and brotli), by their exact names;
// any other name it would read as plain text, so pre_route refuses it.
bool is_decoded_coding(const std::string& name) { return name == "gzip" || name == "deflate" || name == "br"; }

void send_error(httplib::Response& res, int status, const std::string& code, const std::string& message) {
  res.status = status;
  g_trace.error_code = code;
  res.set_content(error_body(code, message), kJson);
}

// The body is left unread: ask the client to close, so its bytes are not taken for a request.
void send_error_and_close(httplib::Response& res, int status, const std::string& code, const std::string& message) {
  send_error(res, status, code, message);
  res.set_header("Connection", "close");
}

// Request text in a log line: control bytes replaced, long paths cut.
std::string printable(const std::string& s) {
  std::string out = s.substr(0, 200);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '"') c = '?';
  }
  return s.size() > 200 ? out + "..." : out;
}

std::pair<std::string, std::string> default_error(int status) {
  switch (status) {
    case 400: return {"bad_request", "malformed HTTP request"};
    case 404: return {"not_found", "no such path"};
    case 413: return {"body_too_large", "the request body is over the limit"};
    case 414: return {"uri_too_long", "the request URI is too long"};
    case 415: return {"unsupported_media_type", "unsupported Content-Type or Content-Encoding"};
    case 416: return {"bad_range", "unsatisfiable Range header"};
    default: return {"http_" + std::to_string(status), "request failed"};
  }
}

}  // namespace

struct Server::Impl {
  ServeRequest options;
  ModelLoader loader;
  ServeMetrics metrics;
  GuardedServer http;
  std::thread listener;
  int listen_fd = -1;
  mutable std::mutex models_mutex;
  std::shared_ptr<const ModelSet> models;  // null while loading and after shutdown
  std::mutex lifecycle_mutex;              // one load, reload or shutdown at a time

  std::shared_ptr<const ModelSet> current() const {
    std::lock_guard<std::mutex> lock(models_mutex);
    return models;
  }
  void swap_models(std::shared_ptr<const ModelSet> next) {
    std::shared_ptr<const ModelSet> old;
    {
      std::lock_guard<std::mutex> lock(models_mutex);
      old = std::move(models);
      models = std::move(next);
    }
    // old is released here, outside the lock: its batchers drain once no request holds it.
  }
  std::shared_ptr<const ModelSet> build_models() {
    ModelSettings settings;
    settings.batch = {options.max_batch, std::chrono::milliseconds(options.max_wait_ms), options.queue};
    settings.threads = given_thread_count(options.threads);
    return std::make_shared<const ModelSet>(load_model_set(options.model_dirs, settings, loader, &metrics));
  }

  void configure();
  httplib::Server::HandlerResponse pre_route(const httplib::Request& req, httplib::Response& res);
  httplib::Server::HandlerResponse fill_error(const httplib::Request& req, httplib::Response& res);
  void access_log(const httplib::Request& req, const httplib::Response& res);
  void classify(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader);
  std::string read_body(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader);
  ServedModel& pick_model(const ModelSet& set, const std::string& name) const;
  void models_info(httplib::Response& res);
  void health(httplib::Response& res);
  void prometheus(httplib::Response& res);
};

void Server::Impl::configure() {
  const auto n = static_cast<std::size_t>(std::max(1, options.connections));
  http.new_task_queue = [n] { return new httplib::ThreadPool(n); };
  http.set_tcp_nodelay(true);  // headers and body are two writes: no Nagle delay between them
  http.set_socket_options([this](socket_t sock) {
    const int yes = 1;  // SO_REUSEADDR, not httplib's default SO_REUSEPORT: a port in use is an error
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    listen_fd = sock;
  });
  http.set_read_timeout(options.read_timeout_s, 0);
  http.set_write_timeout(options.read_timeout_s, 0);
  http.set_keep_alive_timeout(kKeepAliveSeconds);
  http.set_keep_alive_max_count(kKeepAliveRequests);
  http.set_payload_max_length(options.max_body_bytes);
  http.set_stream_limits(
      {kMaxHeadBytes, options.max_body_bytes + kMaxHeadBytes, std::chrono::seconds(options.body_timeout_s)});
  http.set_pre_routing_handler([this](const auto& req, auto& res) { return pre_route(req, res); });
  // "Expect: 100-continue": refuse before inviting a body that would be refused anyway.
  http.set_expect_100_continue_handler([this](const auto& req, auto& res) {
    return pre_route(req, res) == httplib::Server::HandlerResponse::Handled ? res.status : 100;
  });
  http.set_error_handler(httplib::Server::HandlerWithResponse(
      [this](const httplib::Request& req, httplib::Response& res) { return fill_error(req, res); }));
  http.set_exception_handler([](const auto&, auto& res, std::exception_ptr ep) {
    std::string what = "unknown error";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    spdlog::error("request failed: {}", what);
    send_error(res, 500, "internal", "internal error");
  });
  http.set_logger([this](const auto& req, const auto& res) { access_log(req, res); });
  http.set_unlogged_refusal_handler([this](const Refusal& r) {
    metrics.record_request("", r.status, 0.0);
    spdlog::info("{} \"(request line cut off)\" {} {}B error={}", r.peer, r.status, r.reply_bytes, r.code);
  });
  http.Post("/v1/classify", [this](const auto& req, auto& res, const auto& reader) { classify(req, res, reader); });
  http.Get("/v1/models", [this](const auto&, auto& res) { models_info(res); });
  http.Get("/healthz", [this](const auto&, auto& res) { health(res); });
  http.Get("/metrics", [this](const auto&, auto& res) { prometheus(res); });
}

// Runs after the headers, before the body is read: answers wrong paths, methods and
// bodies here, so no route reads (and buffers) a body it does not want.
httplib::Server::HandlerResponse Server::Impl::pre_route(const httplib::Request& req, httplib::Response& res) {
  g_trace = RequestTrace{};
  g_trace.active = true;
  g_trace.start = Clock::now();
  // RFC 9110 14.2: Range is defined for GET only; a server ignores it elsewhere (httplib
  // would cut a classify response to the range).
  if (req.method != "GET") const_cast<httplib::Request&>(req).ranges.clear();
  const auto route = routes().find(req.path);
  auto reply = [&](int status, const std::string& code, const std::string& message) {
    (has_body(req) ? send_error_and_close : send_error)(res, status, code, message);
    return httplib::Server::HandlerResponse::Handled;
  };
  if (route == routes().end()) return reply(404, "not_found", "no such path; try POST /v1/classify");
  if (!route->second.methods.count(req.method)) {
    res.set_header("Allow", route->first == "/v1/classify" ? "POST" : "GET, HEAD");
    return reply(405, "method_not_allowed",
                 req.method.size() > 16 ? "method not allowed" : req.method + " is not allowed here");
  }
  if (req.method != "POST") {
    if (has_body(req)) res.set_header("Connection", "close");  // its body is never read (access_log)
    return httplib::Server::HandlerResponse::Unhandled;
  }
  if (!req.has_header("Content-Length") && !req.has_header("Transfer-Encoding")) {
    return reply(411, "length_required", "send the body with a Content-Length");
  }
  // Where the body ends must be beyond doubt (RFC 9112 6.3): with two lengths, or a length and
  // a transfer coding, a proxy and this server could disagree, and the rest of one request be
  // read as another (smuggled). httplib reads the first Content-Length, and a coding list it
  // does not know ("gzip, chunked") until the connection closes.
  if (req.get_header_value_count("Content-Length") > 1 || req.get_header_value_count("Transfer-Encoding") > 1 ||
      (req.has_header("Content-Length") && req.has_header("Transfer-Encoding"))) {
    return reply(400, "bad_request", "the body's length is given twice (Content-Length, Transfer-Encoding)");
  }
  if (req.has_header("Transfer-Encoding") && !is_chunked_only(req.get_header_value("Transfer-Encoding"))) {
    return reply(501, "not_implemented", "Transfer-Encoding: only chunked is understood");
  }
  // Refused before reading: httplib would otherwise read and drop the whole declared body.
  const std::string length = req.get_header_value("Content-Length");
  if (!std::all_of(length.begin(), length.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return reply(400, "bad_request", "Content-Length is not a number");
  }
  if (!length.empty() && (length.size() > 18 || std::stoull(length) > options.max_body_bytes)) {
    return reply(413, "body_too_large",
                 "the request body is over " + std::to_string(options.max_body_bytes) + " bytes");
  }
  if (req.get_header_value("Content-Type").find("multipart/") != std::string::npos) {
    return reply(415, "unsupported_media_type", "send the titles as a JSON body, not a multipart form");
  }
  if (req.get_header_value_count("Content-Encoding") > 1) {
    return reply(415, "unsupported_media_type", "Content-Encoding is given twice; send one coding");
  }
  const std::string coding = coding_name(req.get_header_value("Content-Encoding"));
  if (!coding.empty() && coding != "identity" && !is_decoded_coding(coding)) {
    return reply(415, "unsupported_media_type",
                 "Content-Encoding \"" + printable(coding) +
                     "\" is not supported; send gzip, deflate, br or an uncompressed body");
  }
  // httplib matches the name as sent, and would read "GZIP" as plain text.
  if (req.has_header("Content-Encoding"))
    const_cast<httplib::Request&>(req).headers.find("Content-Encoding")->second = coding;
  return httplib::Server::HandlerResponse::Unhandled;
}

httplib::Server::HandlerResponse Server::Impl::fill_error(const httplib::Request&, httplib::Response& res) {
  // Runs before the headers are written. An answer httplib made before routing (400, 414,
  // 416) closes the connection (access_log): say so.
  if (!g_trace.active) res.set_header("Connection", "close");
  if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
  const auto [code, message] = default_error(res.status);
  send_error(res, res.status, code, message);
  return httplib::Server::HandlerResponse::Handled;
}

void Server::Impl::access_log(const httplib::Request& req, const httplib::Response& res) {
  // Runs after the response is written. The connection ends after a body left unread
  // (refused, or sent with a GET), whose bytes would be read as the next request (request
  // smuggling behind a proxy that reuses connections), and after a response httplib made
  // before pre-routing (400, 414, ...: the rest of that request is unknown).
  const bool unread_body = has_body(req) && !g_trace.body_read;
  if (!g_trace.active || unread_body || res.get_header_value("Connection") == "close") close_after_response();
  const double seconds = g_trace.active ? std::chrono::duration<double>(Clock::now() - g_trace.start).count() : 0.0;
  const Refusal refusal = take_refusal();  // httplib reports it as a 400 from nowhere, or the handler's status
  const int status = refusal.refused() ? refusal.status : res.status;
  const std::string& peer = refusal.refused() ? refusal.peer : req.remote_addr;
  const std::size_t bytes = refusal.refused() ? refusal.reply_bytes : res.body.size();
  if (refusal.refused()) g_trace.error_code = refusal.code;
  metrics.record_request(req.path, status, seconds);
  std::string extra;
  if (!g_trace.model.empty()) extra += " model=" + printable(g_trace.model);
  if (g_trace.titles) extra += " titles=" + std::to_string(g_trace.titles);
  if (!g_trace.error_code.empty()) extra += " error=" + g_trace.error_code;
  if (!g_trace.titles_json.empty()) extra += " " + g_trace.titles_json;
  spdlog::info("{} \"{} {}\" {} {}B {:.2f}ms{}", peer, printable(req.method), printable(req.path), status, bytes,
               seconds * 1000, extra);
  g_trace = RequestTrace{};
}

std::string Server::Impl::read_body(const httplib::Request& req, httplib::Response& res,
                                    const httplib::ContentReader& reader) {
  std::string body;
  bool over = false;
  const bool ok = reader([&](const char* data, std::size_t n) {
    if (body.size() + n > options.max_body_bytes) {
      over = true;  // also bounds a compressed body's inflated size
      return false;
    }
    body.append(data, n);
    return true;
  });
  if (ok) {
    g_trace.body_read = true;
    return body;
  }
  res.set_header("Connection", "close");  // the rest of the body may still be on the wire
  const std::string limit = std::to_string(options.max_body_bytes);
  if (over || res.status == 413) throw ApiError(413, "body_too_large", "the request body is over " + limit + " bytes");
  if (res.status == 415) throw ApiError(415, "unsupported_media_type", "unsupported Content-Encoding");
  // A body that is cut off or stalls ends the connection (the client is gone, or the stream
  // answered 408): one that arrived whole and still failed did not decode.
  const std::string coding = req.get_header_value("Content-Encoding");
  if (!coding.empty() && coding != "identity") {
    const char* framing = req.has_header("Transfer-Encoding") ? ", or is badly chunked" : "";
    throw ApiError(400, "bad_encoding", "the request body is not valid " + coding + " data" + framing);
  }
  throw ApiError(400, "unreadable_body", "the request body could not be read (truncated or badly chunked)");
}

ServedModel& Server::Impl::pick_model(const ModelSet& set, const std::string& name) const {
  if (name.empty()) {
    if (set.size() == 1) return *set.begin()->second;
    throw ApiError(400, "model_required", "several models are loaded; name one in \"model\" (see GET /v1/models)");
  }
  const auto it = set.find(name);
  if (it == set.end()) throw ApiError(404, "unknown_model", "no model named \"" + name + "\" (see GET /v1/models)");
  return *it->second;
}

void Server::Impl::classify(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader) {
  try {
    ClassifyRequest request = parse_classify_request(read_body(req, res, reader), {options.max_titles, 64});
    g_trace.titles = request.titles.size();
    if (options.log_titles) {
      g_trace.titles_json =
          nlohmann::json(request.titles).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    const std::shared_ptr<const ModelSet> set = current();
    if (!set) {
      res.set_header("Retry-After", "1");
      throw ApiError(503, "loading", "the models are still loading");
    }
    ServedModel& model = pick_model(*set, request.model);
    g_trace.model = model.name();
    std::future<std::vector<Prediction>> pending;
    try {
      pending = model.batcher().submit(std::move(request.titles));
    } catch (const QueueFullError& e) {
      res.set_header("Retry-After", "1");
      throw ApiError(503, "overloaded", std::string("server busy, retry later: ") + e.what());
    }
    std::vector<Prediction> predictions;
    try {
      predictions = pending.get();
    } catch (const std::exception& e) {
      spdlog::error("model {}: prediction failed: {}", model.name(), e.what());
      throw ApiError(500, "prediction_failed", "the model failed on this batch");
    }
    // Judged per request, not per batch: whether a client's lone failed title reads as an
    // error must not depend on whose titles shared its batch (blank titles ask nothing).
    const auto failed = [](const Prediction& p) { return p.failed; };
    const auto unanswered = [](const Prediction& p) { return p.failed || p.abstained; };
    if (std::any_of(predictions.begin(), predictions.end(), failed) &&
        std::all_of(predictions.begin(), predictions.end(), unanswered)) {
      throw ApiError(500, "prediction_failed", "no title of this request got an answer from the model");
    }
    res.set_content(classify_body(model.name_json(), predictions, model.labels(), model.stage_names(), request.top_k),
                    kJson);
  } catch (const ApiError& e) {
    send_error(res, e.status(), e.code(), e.what());
  }
}

void Server::Impl::models_info(httplib::Response& res) {
  const std::shared_ptr<const ModelSet> set = current();
  if (!set) {
    res.set_header("Retry-After", "1");
    return send_error(res, 503, "loading", "the models are still loading");
  }
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [name, model] : *set) list.push_back(model->description());
  res.set_content(nlohmann::json{{"models", list}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                  kJson);
}

void Server::Impl::health(httplib::Response& res) {
  const std::shared_ptr<const ModelSet> set = current();
  if (!set) {
    res.status = 503;
    res.set_content(R"({"status":"loading"})", kJson);
    return;
  }
  nlohmann::json names = nlohmann::json::array();
  for (const auto& [name, model] : *set) names.push_back(name);
  res.set_content(nlohmann::json{{"status", "ok"}, {"models", names}}.dump(-1, ' ', false,
                                                                           nlohmann::json::error_handler_t::replace),
                  kJson);
}

void Server::Impl::prometheus(httplib::Response& res) {
  std::vector<ServedState> served;
  if (const std::shared_ptr<const ModelSet> set = current()) {
    for (const auto& [name, model] : *set) served.push_back({name, model->batcher().depth(), model->endpoint_paused()});
  }
  res.set_content(metrics.render(served), kPrometheus);
}

Server::Server(ServeRequest options, ModelLoader loader) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->loader = std::move(loader);
}

Server::~Server() { shutdown(); }

int Server::start() {
  Impl& s = *impl_;
  s.configure();
  errno = 0;
  const int port = s.options.port == 0                                   ? s.http.bind_to_any_port(s.options.host)
                   : s.http.bind_to_port(s.options.host, s.options.port) ? s.options.port
                                                                         : -1;
  const std::string where = s.options.host + ":" + std::to_string(s.options.port);
  if (port < 0) {
    // httplib resolves the host first; its errno is only meaningful for the socket calls.
    const bool socket_error = errno == EADDRINUSE || errno == EACCES || errno == EADDRNOTAVAIL;
    throw IoError(where, socket_error ? std::string("cannot listen: ") + std::strerror(errno)
                                      : "cannot listen: not an address of this machine, or the port is taken");
  }
  if (s.listen_fd >= 0) ::listen(s.listen_fd, kListenBacklog);
  s.listener = std::thread([&s] { s.http.listen_after_bind(); });
  for (int i = 0; i < 5000 && !s.http.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  spdlog::info("listening on http://{}:{}", s.options.host, port);
  return port;
}

void Server::load() {
  std::lock_guard<std::mutex> lock(impl_->lifecycle_mutex);
  const auto start = Clock::now();
  impl_->swap_models(impl_->build_models());
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (const auto& [name, model] : *impl_->current()) {
    spdlog::info("serving model {} ({}) from {:.1f}s of loading", name,
                 model->description()["family"].get<std::string>(), seconds);
  }
}

bool Server::reload() {
  std::lock_guard<std::mutex> lock(impl_->lifecycle_mutex);
  std::shared_ptr<const ModelSet> next;
  try {
    next = impl_->build_models();
  } catch (const std::exception& e) {
    impl_->metrics.record_reload(false);
    spdlog::error("reload failed, still serving the models loaded before: {}", e.what());
    return false;
  }
  impl_->swap_models(std::move(next));
  impl_->metrics.record_reload(true);
  spdlog::info("reloaded {} model(s)", impl_->current()->size());
  return true;
}

void Server::shutdown() {
  std::lock_guard<std::mutex> lock(impl_->lifecycle_mutex);
  if (impl_->listener.joinable()) {
    impl_->http.stop();      // no new connections
    impl_->listener.join();  // returns once every connection's request has been answered
  }
  impl_->swap_models(nullptr);  // the batchers finish what is queued (nothing, by now)
}

}  // namespace newscls::serve
