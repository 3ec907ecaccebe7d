#include "newscls/core/parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "newscls/core/error.h"

namespace newscls {
namespace {

// Remembers the first exception thrown by any worker.
class FirstError {
 public:
  template <typename F>
  void run(F&& f) {
    try {
      f();
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
      failed_ = true;
    }
  }
  bool failed() const { return failed_; }
  void rethrow() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::mutex mutex_;
  std::exception_ptr error_;
  std::atomic<bool> failed_{false};
};

void run_workers(int workers, FirstError& errors, const std::function<void(int)>& work) {
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(workers > 0 ? workers - 1 : 0));
  for (int w = 1; w < workers; ++w) pool.emplace_back([&, w] { errors.run([&] { work(w); }); });
  errors.run([&] { work(0); });
  for (std::thread& t : pool) t.join();
  errors.rethrow();
}

}  // namespace

void parallel_for(std::size_t n, int threads, const std::function<void(std::size_t, std::size_t, int)>& body,
                  std::size_t min_per_worker) {
  if (n == 0) return;
  const std::size_t most = std::max<std::size_t>(1, n / std::max<std::size_t>(min_per_worker, 1));
  const std::size_t workers = std::clamp<std::size_t>(static_cast<std::size_t>(std::max(threads, 1)), 1, most);
  FirstError errors;
  run_workers(static_cast<int>(workers), errors, [&](int w) {
    const std::size_t t = static_cast<std::size_t>(w);
    body(n * t / workers, n * (t + 1) / workers, w);
  });
}

int resolve_thread_count(int requested) {
  return requested > 0 ? requested : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

int given_thread_count(int threads) {
  if (threads < 1)
    throw UsageError("thread count " + std::to_string(threads) + ": resolve --threads (resolve_thread_count) first");
  return threads;
}

void parallel_tasks(std::size_t count, int threads, const std::function<void(std::size_t, int)>& task) {
  if (count == 0) return;
  const int workers = static_cast<int>(std::min<std::size_t>(count, static_cast<std::size_t>(std::max(threads, 1))));
  std::atomic<std::size_t> next{0};
  FirstError errors;
  run_workers(workers, errors, [&](int w) {
    for (std::size_t i = next++; i < count && !errors.failed(); i = next++) task(i, w);
  });
}

}  // namespace newscls
