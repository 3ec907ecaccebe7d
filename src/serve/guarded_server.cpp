#include "serve/guarded_server.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "serve/api.h"

namespace newscls::serve {

// Bytes read from the socket and not yet handed to httplib. Kept across a connection's
// requests: a client may send its next request with the last one (pipelining), and a buffer
// per request would drop it.
struct ReadAhead {
  std::vector<char> bytes = std::vector<char>(4096);
  std::size_t begin = 0, end = 0;
  bool empty() const { return begin == end; }
  // One recv() into the emptied buffer: its result.
  ssize_t fill(socket_t sock) {
    const ssize_t n = ::recv(sock, bytes.data(), bytes.size(), 0);
    begin = 0;
    end = n > 0 ? static_cast<std::size_t>(n) : 0;
    return n;
  }
  void skip_blank_lines(int& budget) {
    while (!empty() && budget > 0 && (bytes[begin] == '\r' || bytes[begin] == '\n')) ++begin, --budget;
  }
};

namespace {

thread_local Refusal t_refusal;
thread_local bool t_close_after_response = false;

// Stray empty lines skipped before a request line: RFC 9112 2.2 asks a server to ignore at
// least one (a client may end a POST body with CRLF); httplib answers each with a 400.
constexpr int kMaxBlankBytesBeforeRequest = 4;
// Unread bytes at close() make the kernel send a reset, which can destroy an answer still on
// its way: they are read away first, within these bounds.
constexpr std::size_t kMaxDrainBytes = 256 * 1024;
constexpr int kMaxDrainMs = 1000;

// poll() for one event, retried on EINTR: > 0 ready, 0 timed out, < 0 error.
int wait_for(socket_t sock, short events, int timeout_ms) {
  pollfd p{sock, events, 0};
  for (;;) {
    const int n = ::poll(&p, 1, timeout_ms);
    if (n >= 0 || errno != EINTR) return n;
  }
}

int to_ms(time_t sec, time_t usec) { return static_cast<int>(sec * 1000 + usec / 1000); }

// The numeric address of either end, as httplib reports it in Request::remote_addr.
void address_of(socket_t sock, bool peer, std::string& ip, int& port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  auto* a = reinterpret_cast<sockaddr*>(&addr);
  if ((peer ? ::getpeername(sock, a, &len) : ::getsockname(sock, a, &len)) != 0) return;
  char host[NI_MAXHOST] = {};
  char service[NI_MAXSERV] = {};
  if (::getnameinfo(a, len, host, sizeof host, service, sizeof service, NI_NUMERICHOST | NI_NUMERICSERV) != 0) return;
  ip = host;
  port = std::atoi(service);
}

// Reads away what the client still sends (it may be mid-body), within the drain bounds.
void drain(socket_t sock) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kMaxDrainMs);
  char sink[4096];
  for (std::size_t total = 0; total < kMaxDrainBytes;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || wait_for(sock, POLLIN, static_cast<int>(left.count())) <= 0) return;
    const ssize_t n = ::recv(sock, sink, sizeof sink, 0);
    if (n <= 0) return;
    total += static_cast<std::size_t>(n);
  }
}

// A socket stream like httplib's SocketStream (read-ahead buffer, poll with the server's
// timeouts), which also refuses a request past the limits.
class GuardedStream final : public httplib::Stream {
 public:
  GuardedStream(socket_t sock, int read_ms, int write_ms, StreamLimits limits, ReadAhead& ahead)
      : sock_(sock),
        read_ms_(read_ms),
        write_ms_(write_ms),
        limits_(limits),
        ahead_(ahead),
        head_deadline_(std::chrono::steady_clock::now() + std::chrono::milliseconds(read_ms)) {}

  bool is_readable() const override { return wait_for(sock_, POLLIN, read_ms_) > 0; }
  bool is_writable() const override { return wait_for(sock_, POLLOUT, write_ms_) > 0 && is_open(); }
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override {
    if (refused_ || !is_writable()) return -1;  // after a refusal httplib would answer 400 too
    return ::send(sock_, ptr, size, MSG_NOSIGNAL);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override { address_of(sock_, true, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { address_of(sock_, false, ip, port); }
  socket_t socket() const override { return sock_; }
  bool refused() const { return refused_; }  // a limit was passed: the connection must end

 private:
  bool is_open() const;
  bool wait_readable() const;
  bool admit(const char* data, std::size_t n);
  bool admit_head(const char* data, std::size_t n, std::size_t& used);
  bool in_time();
  void refuse_slow_head() {
    refuse(408, "Request Timeout", "request_timeout",
           "the request line and headers did not arrive within the read timeout");
  }
  void refuse(int status, const char* reason, const std::string& code, const std::string& message);

  socket_t sock_;
  int read_ms_, write_ms_;
  StreamLimits limits_;
  ReadAhead& ahead_;
  bool in_head_ = true;
  std::size_t head_bytes_ = 0;
  std::size_t line_bytes_ = 0;  // since the last newline
  char last_ = 0;
  // The whole head must come within one read timeout and the body within max_body_time, not
  // one read timeout per byte: a client trickling would hold a worker thread for good.
  std::chrono::steady_clock::time_point head_deadline_, body_deadline_;
  bool refused_ = false;
};

// Whether the peer has not closed: nothing to read, or something (not end of file).
bool GuardedStream::is_open() const {
  if (wait_for(sock_, POLLIN, 0) <= 0) return true;
  char c;
  return ::recv(sock_, &c, 1, MSG_PEEK) > 0;
}

ssize_t GuardedStream::read(char* ptr, size_t size) {
  if (refused_) return -1;
  if (ahead_.empty()) {
    if (!wait_readable()) {
      if (in_time()) {  // past a deadline, in_time() has answered 408 already
        in_head_
            ? refuse_slow_head()
            : refuse(408, "Request Timeout", "request_timeout",
                     fmt::format("nothing arrived for {:g} s in the middle of the request body", read_ms_ / 1000.0));
      }
      return -1;
    }
    const ssize_t n = ahead_.fill(sock_);
    if (n <= 0) return n;
  }
  const std::size_t n = std::min(size, ahead_.end - ahead_.begin);
  std::memcpy(ptr, ahead_.bytes.data() + ahead_.begin, n);
  ahead_.begin += n;
  return admit(ptr, n) ? static_cast<ssize_t>(n) : -1;
}

// Waits a read timeout at most, and no longer than the head's or the body's deadline.
bool GuardedStream::wait_readable() const {
  const auto deadline = in_head_ ? head_deadline_ : body_deadline_;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  const int ms = static_cast<int>(std::clamp<long long>(left.count() + 1, 0, read_ms_));
  return wait_for(sock_, POLLIN, ms) > 0;
}

bool GuardedStream::in_time() {
  const auto now = std::chrono::steady_clock::now();
  if (in_head_ && now > head_deadline_) {
    refuse_slow_head();
  } else if (!in_head_ && now > body_deadline_) {
    refuse(408, "Request Timeout", "request_timeout",
           fmt::format("the request body did not arrive within {:g} s of its headers",
                       limits_.max_body_time.count() / 1000.0));
  }
  return !refused_;
}

// Counts head bytes up to the first empty line ("\r\n"); used: how many of data were head.
bool GuardedStream::admit_head(const char* data, std::size_t n, std::size_t& used) {
  for (used = 0; in_head_ && used < n; ++used) {
    if (++head_bytes_ > limits_.max_head_bytes) {
      refuse(431, "Request Header Fields Too Large", "header_too_large",
             "the request line and headers are over " + std::to_string(limits_.max_head_bytes) + " bytes");
      return false;
    }
    const char c = data[used];
    if (c == '\n') {
      if (line_bytes_ == 1 && last_ == '\r') {
        in_head_ = false;
        body_deadline_ = std::chrono::steady_clock::now() + limits_.max_body_time;
      }
      line_bytes_ = 0;
    } else {
      ++line_bytes_;
    }
    last_ = c;
  }
  return true;
}

// Follows what httplib is handed: the head, then the body.
bool GuardedStream::admit(const char* data, std::size_t n) {
  std::size_t i = 0;
  if (!in_time() || !admit_head(data, n, i)) return false;
  if (i == n) return true;
  const void* newline = ::memrchr(data + i, '\n', n - i);
  line_bytes_ =
      newline ? static_cast<std::size_t>(data + n - static_cast<const char*>(newline) - 1) : line_bytes_ + (n - i);
  if (line_bytes_ <= limits_.max_line_bytes) return true;
  refuse(413, "Payload Too Large", "body_too_large",
         "the request body sent " + std::to_string(line_bytes_) + " bytes without a newline");
  return false;
}

void GuardedStream::refuse(int status, const char* reason, const std::string& code, const std::string& message) {
  std::string ip;
  int port = 0;
  get_remote_ip_and_port(ip, port);
  spdlog::warn("serve: {} to {}:{} and closed: {}", status, ip, port, message);
  const std::string body = error_body(code, message);
  const std::string reply =
      "HTTP/1.1 " + std::to_string(status) + " " + reason +
      "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\n\r\n" + body;
  write(reply.data(), reply.size());
  refused_ = true;
  t_refusal = {status, code, ip, body.size()};
}

}  // namespace

Refusal take_refusal() { return std::exchange(t_refusal, Refusal{}); }

void close_after_response() { t_close_after_response = true; }

// Waits for the next request on a kept-alive connection, in short slices so a stop() (which
// closes the listening socket) ends idle connections at once.
bool GuardedServer::wait_for_next_request(socket_t sock) const {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(keep_alive_timeout_sec_);
  while (svr_sock_ != INVALID_SOCKET) {
    const int ready = wait_for(sock, POLLIN, 50);
    if (ready != 0) return ready > 0;
    if (std::chrono::steady_clock::now() >= deadline) return false;
  }
  return false;
}

// Until the first byte of the next request is read ahead (already, when it came with the
// last one), past a few stray empty lines.
bool GuardedServer::next_request(socket_t sock, ReadAhead& ahead) const {
  for (int blank_budget = kMaxBlankBytesBeforeRequest;;) {
    ahead.skip_blank_lines(blank_budget);
    if (!ahead.empty()) return svr_sock_ != INVALID_SOCKET;
    if (!wait_for_next_request(sock) || ahead.fill(sock) <= 0) return false;
  }
}

bool GuardedServer::process_and_close_socket(socket_t sock) {
  bool ok = false, forced_close = false;
  ReadAhead ahead;
  for (std::size_t left = keep_alive_max_count_; left > 0 && next_request(sock, ahead); --left) {
    GuardedStream stream(sock, to_ms(read_timeout_sec_, read_timeout_usec_),
                         to_ms(write_timeout_sec_, write_timeout_usec_), limits_, ahead);
    bool closed = false;
    t_refusal = {};
    t_close_after_response = false;
    ok = process_request(stream, left == 1, closed, nullptr);
    // A head cut off in its request line never reaches httplib's logger.
    if (t_refusal.refused() && on_unlogged_refusal_) on_unlogged_refusal_(take_refusal());
    forced_close = stream.refused() || t_close_after_response;
    if (!ok || closed || forced_close) break;
  }
  // Closing on the client mid-request: what it still sends could reset the answer.
  if (forced_close || !ahead.empty()) {
    ::shutdown(sock, SHUT_WR);
    drain(sock);
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ok;
}

}  // namespace newscls::serve
