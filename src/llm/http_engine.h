// Runs many POST requests to one URL with a fixed number in flight (curl multi, one
// thread), an optional requests-per-minute limit, a per-request timeout, and retries with
// exponential backoff and jitter that honour Retry-After: a Retry-After also holds back every
// new request until it has passed, since a rate limit is the server's, not one request's.
//
// The caller decides per result: kDone, kRetry (the engine reschedules unless the retries are
// used up, then calls on_give_up), kGiveUp (on_give_up at once: the server refused this one
// request for good), or throws to stop the run: nothing new starts, the transfers in flight
// are let finish (within the timeout) and handed to on_result, whose verdicts and throws no
// longer count, and then run() rethrows the first error. After max_consecutive_failures
// give-ups in a row with no success (a request the caller gave up as refused, kGiveUp, is the
// server's answer and breaks the row) the engine stops the same way with EndpointDownError: the
// endpoint is down, not one title. Connections are kept alive between run() calls. Checks for
// SIGINT while waiting; SIGINT abandons the transfers in flight at once.
//
//   RequestEngine engine(options);
//   engine.run(bodies, [&](std::size_t i, const HttpResult& r) { ...; return Verdict::kDone; },
//              [&](std::size_t i, const std::string& why) { ... }, counters);
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "llm/retry_policy.h"

namespace newscls::llm {

struct EngineOptions {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"; may carry the key, never logged
  int concurrency = 16;
  double rpm = 0;  // 0: no limit
  double timeout_s = 30;
  int max_retries = 5;
  double backoff_base_s = 0.5;
  double backoff_max_s = 30;
  double retry_after_max_s = 120;
  int max_consecutive_failures = 25;
  bool bypass_proxy = false;  // a loopback server: http_proxy would carry the key off the machine
};

enum class Verdict { kDone, kRetry, kGiveUp };

// max_consecutive_failures titles in a row given up: the endpoint, not a title, is at fault.
class EndpointDownError : public HttpError {
 public:
  using HttpError::HttpError;
};

struct EngineCounters {
  std::size_t requests_sent = 0;
  std::size_t retries = 0;  // requests sent again (counted when sent)
};

class RequestEngine {
 public:
  using OnResult = std::function<Verdict(std::size_t job, const HttpResult& result)>;
  using OnGiveUp = std::function<void(std::size_t job, const std::string& last_error)>;

  explicit RequestEngine(EngineOptions options);
  ~RequestEngine();
  RequestEngine(const RequestEngine&) = delete;
  RequestEngine& operator=(const RequestEngine&) = delete;

  // bodies must outlive the call; every job ends in exactly one kDone or one on_give_up.
  // max_retries >= 0 replaces the options' for this run (a probe of an endpoint taken for down).
  void run(const std::vector<std::string>& bodies, const OnResult& on_result, const OnGiveUp& on_give_up,
           EngineCounters& counters, int max_retries = -1);

 private:
  struct Curl;   // the multi handle, one easy handle per slot, the header list
  struct Queue;  // the jobs of one run(): ready, waiting to retry, failures so far

  void start_ready(Queue& queue, const std::vector<std::string>& bodies, EngineCounters& counters);
  void finish_done(Queue& queue, const OnResult& on_result, const OnGiveUp& on_give_up, EngineCounters& counters,
                   bool stopping);
  void stop_starting(Queue& queue, const char* why) const;
  static void check_interrupted_after(const std::exception_ptr& stop, int signals);
  static void drain(std::size_t job, const HttpResult& result, const OnResult& on_result);
  void settle(Queue& queue, std::size_t job, const HttpResult& result, const OnResult& on_result,
              const OnGiveUp& on_give_up, EngineCounters& counters);
  void give_up(Queue& queue, std::size_t job, const HttpResult& result, const OnGiveUp& on_give_up, bool refused);
  int wait_ms(const Queue& queue) const;

  EngineOptions options_;
  std::mt19937_64 jitter_;
  std::unique_ptr<Curl> curl_;
};

}  // namespace newscls::llm
