// A progress bar on stderr: redrawn in place on a terminal, a log line every few seconds
// otherwise (CI logs). Silent for work that ends within the first two seconds.
//
//   Progress bar("train", total_steps);
//   bar.advance(1, fmt::format("loss {:.3f}", loss));
//   bar.finish();
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace newscls {

struct ProgressPace {
  double quiet_s = 2.0;          // work that ends sooner draws nothing
  double log_interval_s = 10.0;  // one log line this often when stderr is no terminal
};

class Progress {
 public:
  Progress(std::string label, std::size_t total, ProgressPace pace = {});
  ~Progress();
  void advance(std::size_t n, const std::string& extra = "");
  void finish();

 private:
  void draw(bool final_line);
  std::string label_;
  std::size_t total_, done_ = 0, drawn_done_ = 0;
  ProgressPace pace_;
  std::string extra_;
  std::chrono::steady_clock::time_point start_, last_draw_;
  bool tty_, drawn_ = false, finished_ = false;
};

}  // namespace newscls
