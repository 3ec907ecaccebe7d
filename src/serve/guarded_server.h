// httplib::Server with a bound on what one connection can make it hold before a request is
// parsed. cpp-httplib 0.11.4 reads a request line, a header line or a chunk-size line into
// memory however long it is: one client streaming 400 MB with no newline grew the server by
// 400 MB (64 such connections would take any machine down). This server runs httplib's own
// request processing over its own socket stream, which refuses
//   - a request head (request line and headers) over max_head_bytes, or one that takes longer
//     than the read timeout to arrive: it answers 431 or 408 and closes the connection;
//   - after the head, a run of more than max_line_bytes with no newline (a chunk-size line;
//     a body is capped by set_payload_max_length already): it closes the connection.
// Keep-alive, timeouts and graceful stop() behave as httplib's own.
//
//   GuardedServer http;
//   http.set_stream_limits({64 * 1024, max_body_bytes + 64 * 1024});
//   http.Post(...); http.listen_after_bind();
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <utility>

#include <httplib.h>

namespace newscls::serve {

// A request head refused on this thread (431 too large, 408 too slow; the connection then
// closes). httplib still calls the logger for a head cut off among its headers, as a 400 with
// no address; the access log and metrics take this instead. Reset before each request.
struct HeadRefusal {
  int status = 0;           // 0: none
  bool refused() const { return status != 0; }
  std::string code;         // the error code of the reply body
  std::string peer;         // the client's address
  std::size_t reply_bytes = 0;
};
HeadRefusal take_head_refusal();  // and clears it

struct StreamLimits {
  std::size_t max_head_bytes = 64 * 1024;
  std::size_t max_line_bytes = 2 * 1024 * 1024;
};

class GuardedServer : public httplib::Server {
 public:
  void set_stream_limits(StreamLimits limits) { limits_ = limits; }
  // Told of a refusal that httplib's logger never saw (one cut off in the request line).
  void set_unlogged_refusal_handler(std::function<void(const HeadRefusal&)> fn) { on_unlogged_refusal_ = std::move(fn); }

 private:
  bool process_and_close_socket(socket_t sock) override;
  bool wait_for_next_request(socket_t sock) const;

  StreamLimits limits_;
  std::function<void(const HeadRefusal&)> on_unlogged_refusal_;
};

}  // namespace newscls::serve
