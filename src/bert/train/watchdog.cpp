#include "bert/train/watchdog.h"

#include <cstdio>
#include <cstdlib>

#include "newscls/core/exit_codes.h"
#include "newscls/core/interrupt.h"

namespace newscls::bert {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kPoll{100};
// A signal is first left to the joining code (it checks between its own calls); only a rank
// still blocked inside c10d after this long is ended by the watchdog.
constexpr std::chrono::milliseconds kSignalGrace{1000};

// Armed only where nothing is being written (joining; a rank other than 0 looking for the lost
// one), so ending the process loses nothing.
[[noreturn]] void end_process(const std::string& message, int code) {
  std::fprintf(stderr, "error: distributed: %s\n", message.c_str());
  std::fflush(stderr);
  std::_Exit(code);
}

}  // namespace

Watchdog::Watchdog() : thread_([this] { watch(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Watchdog::arm(const std::string& step, std::chrono::milliseconds limit, const std::string& timeout_hint) {
  std::lock_guard<std::mutex> lock(mutex_);
  step_ = step;
  timeout_hint_ = timeout_hint;
  deadline_ = Clock::now() + limit;
  limit_s_ = std::chrono::duration_cast<std::chrono::seconds>(limit).count();
  armed_ = true;
}

void Watchdog::disarm() {
  std::lock_guard<std::mutex> lock(mutex_);
  armed_ = false;
}

void Watchdog::watch() {
  Clock::time_point signalled_at{};
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, kPoll, [this] { return stopping_; })) {
    if (!armed_) continue;
    const Clock::time_point now = Clock::now();
    if (interrupted() && signalled_at == Clock::time_point{}) signalled_at = now;
    if (signalled_at != Clock::time_point{} && now - signalled_at >= kSignalGrace) {
      end_process("interrupted while " + step_, kExitInterrupted);
    }
    if (now >= deadline_) {
      end_process("no answer within " + std::to_string(limit_s_) + " s while " + step_ + timeout_hint_, kExitError);
    }
  }
}

}  // namespace newscls::bert
