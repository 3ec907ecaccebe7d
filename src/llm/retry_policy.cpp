#include "llm/retry_policy.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <curl/curl.h>

#include "llm/chat_api.h"

namespace newscls::llm {
namespace {

// Every 5xx is a server-side fault that may pass, except 501 (method not implemented) and
// 505 (HTTP version not supported), which no retry changes.
bool retryable_status(long status) {
  if (status == 408 || status == 429) return true;
  return status >= 500 && status <= 599 && status != 501 && status != 505;
}

std::string status_advice(long status, const FatalContext& context) {
  switch (status) {
    case 400:
      return "the server rejected the request; check model ('" + context.model +
             "'), thinking, json_mode and extra_body in the config";
    case 401: return "the API key was rejected by " + context.url + "; set " + context.key_env + " to a valid key";
    case 402: return "payment required: the account behind " + context.key_env + " has no balance left; top it up";
    case 403: return "access denied for the key in " + context.key_env + "; check its permissions";
    case 404: return "not found: check base_url (" + context.url + ") and model ('" + context.model + "')";
    case 422:
      return "the server could not process the request parameters; check model, max_tokens, "
             "temperature and extra_body";
    default: return "request refused by " + context.url + "; check base_url and the request settings";
  }
}

}  // namespace

Outcome classify(const HttpResult& result) {
  switch (result.transport) {
    case Transport::kOk: break;
    case Transport::kTimeout:
    case Transport::kDropped:
    case Transport::kConnect: return Outcome::kRetryable;
    default: return Outcome::kFatal;
  }
  if (result.status >= 200 && result.status < 300) return Outcome::kSuccess;
  return retryable_status(result.status) ? Outcome::kRetryable : Outcome::kFatal;
}

std::string describe(const HttpResult& result) {
  switch (result.transport) {
    case Transport::kOk: return "HTTP " + std::to_string(result.status);
    case Transport::kTimeout: return "timeout (" + result.transport_message + ")";
    case Transport::kDropped: return "connection dropped (" + result.transport_message + ")";
    case Transport::kConnect: return "cannot connect (" + result.transport_message + ")";
    case Transport::kResolve: return "cannot resolve host (" + result.transport_message + ")";
    case Transport::kTls: return "TLS failure (" + result.transport_message + ")";
    case Transport::kOther: return "transfer failed (" + result.transport_message + ")";
  }
  return "unknown";
}

double backoff_seconds(int failures, double base_s, double max_s, double unit_random, double retry_after_s,
                       double retry_after_max_s) {
  const double exponent = std::min(std::max(failures - 1, 0), 30);
  const double full = std::min(max_s, base_s * std::pow(2.0, exponent));
  if (retry_after_s >= 0) {
    // Jitter on top of the server's time, so its rejected requests do not all return at once.
    const double after = std::min(retry_after_s, retry_after_max_s);
    return after + 0.5 * unit_random * std::min(after, full);
  }
  return full * (0.5 + 0.5 * unit_random);
}

double parse_retry_after(std::string_view value, std::time_t now) {
  const std::string text(value);
  char* end = nullptr;
  const double seconds = std::strtod(text.c_str(), &end);
  if (end != text.c_str() && *end == '\0' && seconds >= 0 && std::isfinite(seconds)) return seconds;
  const std::time_t when = curl_getdate(text.c_str(), nullptr);
  if (when == -1) return -1;
  return when > now ? static_cast<double>(when - now) : 0.0;
}

std::string server_said(const HttpResult& result, const FatalContext& context) {
  std::string said = error_excerpt(result.body);
  for (std::size_t pos; !context.secret.empty() && (pos = said.find(context.secret)) != std::string::npos;) {
    said.replace(pos, context.secret.size(), "***");
  }
  return said;
}

bool refuses_one_request(const HttpResult& result) {
  return result.transport == Transport::kOk && (result.status == 400 || result.status == 422);
}

HttpError fatal_error(const HttpResult& result, const FatalContext& context) {
  if (result.transport != Transport::kOk) {
    return HttpError(0,
                     "request to " + context.url + " failed: " + describe(result) + "; check base_url and the network");
  }
  std::string message = status_advice(result.status, context);
  const std::string said = server_said(result, context);
  if (!said.empty()) message += " (server said: " + said + ")";
  return HttpError(static_cast<int>(result.status), message);
}

}  // namespace newscls::llm
