// c10d's TCPStore client reads its socket without a timeout: a MASTER_PORT where some other
// program listens and never answers blocks a joining rank for ever, deaf to SIGTERM and Ctrl-C,
// and so does a rank 0 (the store's host) that hangs without dying. Around such calls this
// watchdog ends the process, naming the step, when the step outlives its limit or when a signal
// is not honoured within a second.
//
//   Watchdog watchdog;
//   watchdog.arm("rank 1 was opening the store at host:port", seconds(timeout + 5));
//   ... blocking c10d call ...
//   watchdog.disarm();  // also on destruction
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace newscls::bert {

class Watchdog {
 public:
  Watchdog();
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Starts watching `step` ("rank 1 was ...", said in the error) for `limit` from now; replaces
  // the step before. `timeout_hint` follows the step only when the limit is what ended it.
  void arm(const std::string& step, std::chrono::milliseconds limit, const std::string& timeout_hint = "");
  void disarm();

 private:
  void watch();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::string step_, timeout_hint_;
  std::chrono::steady_clock::time_point deadline_;
  long long limit_s_ = 0;
  bool armed_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace newscls::bert
