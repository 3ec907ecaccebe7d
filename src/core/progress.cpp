#include "newscls/core/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include <spdlog/spdlog.h>

namespace newscls {
namespace {

using Clock = std::chrono::steady_clock;
constexpr double kTtyRedraw = 0.2;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

std::string clock_text(double seconds) {
  const long s = static_cast<long>(seconds + 0.5);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  return buf;
}

}  // namespace

Progress::Progress(std::string label, std::size_t total, ProgressPace pace)
    : label_(std::move(label)),
      total_(total),
      pace_(pace),
      start_(Clock::now()),
      last_draw_(start_),
      tty_(::isatty(STDERR_FILENO) != 0) {}

Progress::~Progress() { finish(); }

void Progress::advance(std::size_t n, const std::string& extra) {
  done_ += n;
  if (!extra.empty()) extra_ = extra;
  const auto now = Clock::now();
  if (seconds_between(start_, now) < pace_.quiet_s) return;
  if (seconds_between(last_draw_, now) < (tty_ ? kTtyRedraw : pace_.log_interval_s)) return;
  last_draw_ = now;
  draw(false);
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  // A log line already showing the end is not written again (an llm run's last batch, whose
  // advance drew it, was logged twice); a terminal's bar still needs its newline.
  if (drawn_ && (tty_ || done_ != drawn_done_)) draw(true);
}

void Progress::draw(bool final_line) {
  drawn_ = true;
  drawn_done_ = done_;
  const double elapsed = seconds_between(start_, Clock::now());
  const double rate = elapsed > 0 ? done_ / elapsed : 0;
  std::string text = label_ + " ";
  if (total_ > 0) {
    const double frac = std::min(1.0, double(done_) / double(total_));
    const int width = 24, filled = static_cast<int>(frac * width);
    text += "[" + std::string(filled, '#') + std::string(width - filled, '.') + "] ";
    text += std::to_string(done_) + "/" + std::to_string(total_);
    char pct[16];
    std::snprintf(pct, sizeof pct, " %3.0f%%", frac * 100);
    text += pct;
  } else {
    text += std::to_string(done_);
  }
  char tail[96];
  std::snprintf(tail, sizeof tail, " %.1f/s elapsed %s", rate, clock_text(elapsed).c_str());
  text += tail;
  if (total_ > 0 && rate > 0 && done_ < total_) text += " eta " + clock_text((total_ - done_) / rate);
  if (!extra_.empty()) text += " " + extra_;
  if (tty_) {
    std::fprintf(stderr, "\r\033[K%s%s", text.c_str(), final_line ? "\n" : "");
    std::fflush(stderr);
  } else {
    spdlog::info("{}", text);
  }
}

}  // namespace newscls
