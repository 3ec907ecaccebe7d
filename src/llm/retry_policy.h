// What to do with the outcome of one HTTP attempt: accept, retry later, or stop the run.
//
// Retried: 408, 429, every 5xx but 501 and 505, timeouts, dropped or refused connections.
// Fatal (the run stops with an HttpError saying what to fix): every other non-2xx status,
// notably 400, 401 (names the API key variable), 402, 403, 404, 422, 501, 505; unresolvable
// hosts; TLS failures. Backoff is exponential with jitter and never shorter than Retry-After.
//
//   if (classify(result) == Outcome::kRetryable) wait(backoff_seconds(attempt, ...));
#pragma once

#include <ctime>
#include <string>
#include <string_view>

#include "newscls/core/error.h"

namespace newscls::llm {

enum class Transport { kOk, kTimeout, kDropped, kConnect, kResolve, kTls, kOther };

// One attempt as the engine saw it.
struct HttpResult {
  long status = 0;  // 0 when no HTTP response arrived
  Transport transport = Transport::kOk;
  std::string transport_message;
  std::string body;
  double retry_after_s = -1;  // from a Retry-After header; -1 when absent
  double latency_ms = 0;
};

enum class Outcome { kSuccess, kRetryable, kFatal };

Outcome classify(const HttpResult& result);
// Short description for logs and errors: "HTTP 503", "timeout", "connection dropped".
std::string describe(const HttpResult& result);

// failures = how many attempts of this request failed so far (1 for the first retry);
// unit_random in [0, 1) supplies the jitter: the delay is in [d/2, d), d = base * 2^(f-1)
// capped at max_s; with a Retry-After r (capped at retry_after_max_s) it is in [r, r + min(r, d)/2).
double backoff_seconds(int failures, double base_s, double max_s, double unit_random, double retry_after_s,
                       double retry_after_max_s);

// Seconds from a Retry-After value (delta-seconds or an HTTP date); -1 when unparsable.
double parse_retry_after(std::string_view value, std::time_t now);

struct FatalContext {
  std::string url;
  std::string model;
  std::string key_env;  // the variable the API key came from (named, never shown)
  std::string secret;   // masked as *** should a server echo it back
};

// The error that stops the run, with what to do about it.
HttpError fatal_error(const HttpResult& result, const FatalContext& context);
// The error body's message, the API key masked as ***.
std::string server_said(const HttpResult& result, const FatalContext& context);
// A 400 or 422: fatal for a run's first answers (the request is wrong for every title), but
// once the server has answered others it is about this title (DeepSeek refuses some news
// titles with 400 "Content Exists Risk"), and only that title goes unanswered.
bool refuses_one_request(const HttpResult& result);

}  // namespace newscls::llm
