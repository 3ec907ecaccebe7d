// httplib::Server with a bound on what one connection can make it hold before a request is
// parsed. cpp-httplib 0.11.4 reads a request line, a header line or a chunk-size line into
// memory however long it is: one client streaming 400 MB with no newline grew the server by
// 400 MB (64 such connections would take any machine down). This server runs httplib's own
// request processing over its own socket stream, which answers and closes the connection on
//   - a request head (request line and headers) over max_head_bytes: 431;
//   - a head that takes longer than the read timeout to arrive, or a body that takes longer
//     than max_body_time after its head (each read within the read timeout is not enough: a
//     byte every few seconds would hold a worker thread for days): 408;
//   - after the head, a run of more than max_line_bytes with no newline (a chunk-size line
//     or a body past max_body_bytes, whose cap httplib checks only at the line's end): 413.
// Keep-alive, timeouts and graceful stop() behave as httplib's own; a pipelined request (sent
// before the previous answer) is answered in turn, where httplib 0.11 drops it, and a stray
// empty line before a request is skipped. On close, what the client still sends is read away
// for a moment first, so the reset of unread bytes does not overtake the last answer.
//
//   GuardedServer http;
//   http.set_stream_limits({64 * 1024, max_body_bytes + 64 * 1024, std::chrono::seconds(30)});
//   http.Post(...); http.listen_after_bind();
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <utility>

#include <httplib.h>

namespace newscls::serve {

// A request refused on this thread by the stream (its answer sent, the connection then
// closes). httplib still calls the logger, with a 400 from no address for a head cut off
// among its headers or the handler's own status for a body; the access log and metrics take
// this instead. Reset before each request.
struct Refusal {
  int status = 0;  // 0: none
  bool refused() const { return status != 0; }
  std::string code;  // the error code of the reply body
  std::string peer;  // the client's address
  std::size_t reply_bytes = 0;
};
Refusal take_refusal();  // and clears it

// From the logger: close this thread's connection once the response is written. httplib 0.11
// keeps a connection open whatever the response's "Connection: close" says, and would read
// an unread body's bytes as the next request.
void close_after_response();

struct ReadAhead;

struct StreamLimits {
  std::size_t max_head_bytes = 64 * 1024;
  std::size_t max_line_bytes = 2 * 1024 * 1024;
  std::chrono::milliseconds max_body_time{30000};  // from the end of the head
};

class GuardedServer : public httplib::Server {
 public:
  void set_stream_limits(StreamLimits limits) { limits_ = limits; }
  // Told of a refusal that httplib's logger never saw (one cut off in the request line).
  void set_unlogged_refusal_handler(std::function<void(const Refusal&)> fn) { on_unlogged_refusal_ = std::move(fn); }

 private:
  bool process_and_close_socket(socket_t sock) override;
  bool wait_for_next_request(socket_t sock) const;
  bool next_request(socket_t sock, ReadAhead& ahead) const;

  StreamLimits limits_;
  std::function<void(const Refusal&)> on_unlogged_refusal_;
};

}  // namespace newscls::serve
