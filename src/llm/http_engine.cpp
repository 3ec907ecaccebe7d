#include "llm/http_engine.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <exception>
#include <mutex>
#include <queue>
#include <utility>

#include <curl/curl.h>
#include <spdlog/spdlog.h>

#include "newscls/core/error.h"
#include "newscls/core/interrupt.h"

namespace newscls::llm {
namespace {

using Clock = std::chrono::steady_clock;

// Per-slot state of the attempt in flight.
struct Transfer {
  CURL* easy = nullptr;
  std::size_t job = 0;
  bool busy = false;
  std::string response;
  double retry_after_s = -1;
  Clock::time_point start;
};

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  static_cast<Transfer*>(user)->response.append(data, size * count);
  return size * count;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  const std::string_view line(data, size * count);
  constexpr std::string_view kName = "retry-after:";
  if (line.size() > kName.size()) {
    std::string name(line.substr(0, kName.size()));
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (name == kName) {
      std::string_view value = line.substr(kName.size());
      while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
      while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) {
        value.remove_suffix(1);
      }
      static_cast<Transfer*>(user)->retry_after_s = parse_retry_after(value, std::time(nullptr));
    }
  }
  return size * count;
}

Transport transport_of(CURLcode code) {
  switch (code) {
    case CURLE_OK: return Transport::kOk;
    case CURLE_OPERATION_TIMEDOUT: return Transport::kTimeout;
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM: return Transport::kDropped;
    case CURLE_COULDNT_CONNECT: return Transport::kConnect;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY: return Transport::kResolve;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM: return Transport::kTls;
    default: return Transport::kOther;
  }
}

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

}  // namespace

struct RequestEngine::Curl {
  CURLM* multi = nullptr;
  curl_slist* headers = nullptr;
  std::vector<Transfer> slots;
  Clock::time_point next_start = Clock::now();  // for the rpm limit

  ~Curl() {
    for (Transfer& t : slots) {
      if (t.busy) curl_multi_remove_handle(multi, t.easy);
      curl_easy_cleanup(t.easy);
    }
    curl_multi_cleanup(multi);
    curl_slist_free_all(headers);
  }
  // Drops the attempts in flight when a run stops early; their jobs stay unanswered.
  void abandon() {
    for (Transfer& t : slots) {
      if (t.busy) curl_multi_remove_handle(multi, t.easy);
      t.busy = false;
    }
  }
};

struct RequestEngine::Queue {
  std::deque<std::size_t> ready;
  using Delayed = std::pair<Clock::time_point, std::size_t>;
  std::priority_queue<Delayed, std::vector<Delayed>, std::greater<>> waiting;
  std::vector<int> failures;
  std::size_t settled = 0;
  std::size_t busy = 0;
  int consecutive_give_ups = 0;
  int max_retries = 0;
  Clock::time_point paused_until{};  // a Retry-After holds back every new start until then
};

RequestEngine::RequestEngine(EngineOptions options)
    : options_(std::move(options)), jitter_(std::random_device{}()), curl_(std::make_unique<Curl>()) {
  global_init();
  curl_->multi = curl_multi_init();
  if (!curl_->multi) throw HttpError(0, "cannot initialise libcurl");
  curl_->headers = curl_slist_append(curl_->headers, "Content-Type: application/json");
  curl_->headers = curl_slist_append(curl_->headers, "Expect:");
  for (const std::string& header : options_.headers) {
    curl_->headers = curl_slist_append(curl_->headers, header.c_str());
  }
  const long timeout_ms = static_cast<long>(options_.timeout_s * 1000);
  curl_->slots.resize(static_cast<std::size_t>(options_.concurrency));
  for (Transfer& t : curl_->slots) {
    t.easy = curl_easy_init();
    if (!t.easy) throw HttpError(0, "cannot initialise libcurl");
    curl_easy_setopt(t.easy, CURLOPT_URL, options_.url.c_str());
    curl_easy_setopt(t.easy, CURLOPT_HTTPHEADER, curl_->headers);
    curl_easy_setopt(t.easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(t.easy, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(t.easy, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(t.easy, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(t.easy, CURLOPT_PRIVATE, &t);
    curl_easy_setopt(t.easy, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(t.easy, CURLOPT_CONNECTTIMEOUT_MS, std::min(timeout_ms, 10000L));
    curl_easy_setopt(t.easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(t.easy, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(t.easy, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(t.easy, CURLOPT_USERAGENT, "newscls/0.1");
    if (options_.bypass_proxy) curl_easy_setopt(t.easy, CURLOPT_NOPROXY, "*");
  }
}

RequestEngine::~RequestEngine() = default;

void RequestEngine::run(const std::vector<std::string>& bodies, const OnResult& on_result, const OnGiveUp& on_give_up,
                        EngineCounters& counters, int max_retries) {
  Queue queue;
  queue.max_retries = max_retries >= 0 ? max_retries : options_.max_retries;
  queue.failures.assign(bodies.size(), 0);
  for (std::size_t i = 0; i < bodies.size(); ++i) queue.ready.push_back(i);
  struct Abandon {
    Curl& curl;
    ~Abandon() { curl.abandon(); }
  } abandon_on_exit{*curl_};

  std::exception_ptr stop;     // set by a throw or a signal: nothing new starts, the transfers in flight finish
  int signals_to_abandon = 1;  // stopped by an error, a signal abandons the wait; by a signal, a second one
  while (stop ? queue.busy > 0 : queue.settled < bodies.size()) {
    if (!stop && interrupted()) {
      stop = std::make_exception_ptr(InterruptedError());
      signals_to_abandon = 2;
      stop_starting(queue, "interrupted (again to abandon them)");
    }
    check_interrupted_after(stop, signals_to_abandon);
    const auto now = Clock::now();
    while (!queue.waiting.empty() && queue.waiting.top().first <= now) {
      queue.ready.push_back(queue.waiting.top().second);
      queue.waiting.pop();
    }
    if (!stop) start_ready(queue, bodies, counters);
    int running = 0;
    curl_multi_perform(curl_->multi, &running);
    try {
      finish_done(queue, on_result, on_give_up, counters, stop != nullptr);
    } catch (...) {
      stop = std::current_exception();
      stop_starting(queue, "stopping");
    }
    if (!stop && queue.settled == bodies.size()) break;
    const int timeout = wait_ms(queue);
    if (timeout > 0) curl_multi_poll(curl_->multi, nullptr, 0, timeout, nullptr);
  }
  if (stop) std::rethrow_exception(stop);
}

// A signal while waiting for the transfers in flight ends the wait (the second, when a signal
// began it); when an error began it, that error is what the user must learn (a 402, say), so
// it is logged before the interrupt.
void RequestEngine::check_interrupted_after(const std::exception_ptr& stop, int signals) {
  if (interrupt_count() < signals) return;
  if (stop) {
    try {
      std::rethrow_exception(stop);
    } catch (const InterruptedError&) {
    } catch (const std::exception& e) {
      spdlog::error("llm: the run had stopped on: {}", e.what());
    }
  }
  throw InterruptedError();
}

void RequestEngine::stop_starting(Queue& queue, const char* why) const {
  queue.ready.clear();
  queue.waiting = {};
  // Their answers are paid for: let them arrive, so on_result can keep them (a cache).
  if (queue.busy > 0) {
    spdlog::warn("llm: {}; waiting for the {} request(s) in flight (at most {:g} s) to keep their answers", why,
                 queue.busy, options_.timeout_s);
  }
}

void RequestEngine::start_ready(Queue& queue, const std::vector<std::string>& bodies, EngineCounters& counters) {
  const auto interval = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(options_.rpm > 0 ? 60.0 / options_.rpm : 0.0));
  for (Transfer& t : curl_->slots) {
    if (queue.ready.empty()) return;
    if (t.busy) continue;
    const auto now = Clock::now();
    if (now < queue.paused_until) return;
    if (options_.rpm > 0) {
      if (now < curl_->next_start) return;
      // From now, not from the last start: after an idle gap two requests must not go together.
      curl_->next_start = std::max(curl_->next_start, now) + interval;
    }
    t.job = queue.ready.front();
    queue.ready.pop_front();
    t.busy = true;
    t.response.clear();
    t.retry_after_s = -1;
    t.start = now;
    const std::string& body = bodies[t.job];
    curl_easy_setopt(t.easy, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(t.easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    curl_multi_add_handle(curl_->multi, t.easy);
    ++queue.busy;
    ++counters.requests_sent;
    if (queue.failures[t.job] > 0) ++counters.retries;  // a retry scheduled when the run stopped was never sent
  }
}

void RequestEngine::finish_done(Queue& queue, const OnResult& on_result, const OnGiveUp& on_give_up,
                                EngineCounters& counters, bool stopping) {
  int left = 0;
  while (CURLMsg* msg = curl_multi_info_read(curl_->multi, &left)) {
    if (msg->msg != CURLMSG_DONE) continue;
    Transfer* t = nullptr;
    curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, reinterpret_cast<char**>(&t));
    HttpResult result;
    const CURLcode code = msg->data.result;
    result.transport = transport_of(code);
    if (code != CURLE_OK) result.transport_message = curl_easy_strerror(code);
    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &result.status);
    result.body = std::move(t->response);
    result.retry_after_s = t->retry_after_s;
    result.latency_ms = std::chrono::duration<double, std::milli>(Clock::now() - t->start).count();
    curl_multi_remove_handle(curl_->multi, t->easy);
    t->busy = false;
    --queue.busy;
    if (stopping) {
      drain(t->job, result, on_result);
    } else {
      settle(queue, t->job, result, on_result, on_give_up, counters);
    }
  }
}

// A result that arrives after the run was stopped: on_result sees it, but its verdict and
// any error it throws no longer matter (the first error is the one reported).
void RequestEngine::drain(std::size_t job, const HttpResult& result, const OnResult& on_result) {
  try {
    on_result(job, result);
  } catch (const std::exception& e) {
    spdlog::debug("llm: after the stop: {}", e.what());
  }
}

void RequestEngine::settle(Queue& queue, std::size_t job, const HttpResult& result, const OnResult& on_result,
                           const OnGiveUp& on_give_up, EngineCounters& counters) {
  const Verdict verdict = on_result(job, result);
  if (verdict == Verdict::kDone) {
    ++queue.settled;
    queue.consecutive_give_ups = 0;
    return;
  }
  const int failures = ++queue.failures[job];
  if (verdict == Verdict::kGiveUp || failures > queue.max_retries) {
    give_up(queue, job, result, on_give_up, verdict == Verdict::kGiveUp);
    return;
  }
  const double unit = std::uniform_real_distribution<double>(0.0, 1.0)(jitter_);
  const double delay = backoff_seconds(failures, options_.backoff_base_s, options_.backoff_max_s, unit,
                                       result.retry_after_s, options_.retry_after_max_s);
  spdlog::debug("llm: {} - retry {} in {:.2f} s", describe(result), failures, delay);
  const auto now = Clock::now();
  const auto after = [&](double seconds) {
    return now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  };
  queue.waiting.emplace(after(delay), job);
  if (result.retry_after_s >= 0) {
    queue.paused_until =
        std::max(queue.paused_until, after(std::min(result.retry_after_s, options_.retry_after_max_s)));
  }
}

void RequestEngine::give_up(Queue& queue, std::size_t job, const HttpResult& result, const OnGiveUp& on_give_up,
                            bool refused) {
  ++queue.settled;
  on_give_up(job, describe(result) + " after " + std::to_string(queue.failures[job]) + " attempt(s)");
  if (refused) {  // the server answered, for this request alone
    queue.consecutive_give_ups = 0;
    return;
  }
  if (++queue.consecutive_give_ups >= options_.max_consecutive_failures) {
    // A success the caller retried had a body it could not use.
    const std::string last = classify(result) == Outcome::kSuccess ? "a malformed reply" : describe(result);
    throw EndpointDownError(static_cast<int>(result.status),
                            "stopping: " + std::to_string(queue.consecutive_give_ups) +
                                " titles in a row failed (last: " + last + " from " + options_.url + ", after up to " +
                                std::to_string(queue.max_retries) + " retries each); check that the endpoint is up");
  }
}

int RequestEngine::wait_ms(const Queue& queue) const {
  const auto now = Clock::now();
  const bool free_slot = queue.busy < curl_->slots.size();
  const bool may_start = queue.paused_until <= now && (options_.rpm <= 0 || curl_->next_start <= now);
  if (!queue.ready.empty() && free_slot && may_start) return 0;
  auto wake = now + std::chrono::milliseconds(100);  // keeps SIGINT checks frequent
  if (!queue.waiting.empty()) wake = std::min(wake, queue.waiting.top().first);
  if (!queue.ready.empty() && free_slot) wake = std::min(wake, std::max(curl_->next_start, queue.paused_until));
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(wake - now).count();
  return static_cast<int>(std::max<long long>(ms, 1));
}

}  // namespace newscls::llm
