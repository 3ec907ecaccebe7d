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

class Progress {
 public:
  Progress(std::string label, std::size_t total);
  ~Progress();
  void advance(std::size_t n, const std::string& extra = "");
  void finish();

 private:
  void draw(bool final_line);
  std::string label_;
  std::size_t total_, done_ = 0;
  std::string extra_;
  std::chrono::steady_clock::time_point start_, last_draw_;
  bool tty_, drawn_ = false, finished_ = false;
};

}  // namespace newscls
