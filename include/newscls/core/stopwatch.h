// Wall-clock seconds since a start, on the steady clock.
//
//   Stopwatch watch;  ...;  double s = watch.seconds();
#pragma once

#include <chrono>

namespace newscls {

class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

 private:
  std::chrono::steady_clock::time_point start_;
};

}  // namespace newscls
