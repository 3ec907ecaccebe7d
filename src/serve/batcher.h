// Micro-batching for one model: requests from many connections are queued, and one worker
// thread runs them through the model in batches of up to max_batch titles. A batch starts
// when it is full, when as many requests wait as the previous batch served (clients that
// wait for their answer before sending again are all back), or when its oldest request has
// waited max_wait; a request larger than max_batch is split over several batches. The
// model is only ever called from the worker, so predict_batch need not be thread-safe.
//
// The queue holds at most max_queue requests; submit() refuses more with QueueFullError
// (the server answers 503), so memory stays bounded however fast clients send.
//
//   MicroBatcher b([&](const auto& titles) { return model->predict_batch(titles); }, {64, 5ms, 256});
//   std::future<std::vector<Prediction>> f = b.submit({"title one", "title two"});
//   std::vector<Prediction> p = f.get();   // rethrows what predict threw
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "newscls/core/classifier.h"

namespace newscls::serve {

class QueueFullError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct BatchOptions {
  std::size_t max_batch = 64;
  std::chrono::microseconds max_wait{5000};
  std::size_t max_queue = 256;
};

class MicroBatcher {
 public:
  using PredictFn = std::function<std::vector<Prediction>(const std::vector<std::string>&)>;
  using BatchFn = std::function<void(std::size_t titles)>;  // told each classified batch's size

  MicroBatcher(PredictFn predict, BatchOptions options, BatchFn on_batch = {});
  // Finishes every queued request, then stops the worker.
  ~MicroBatcher();
  MicroBatcher(const MicroBatcher&) = delete;
  MicroBatcher& operator=(const MicroBatcher&) = delete;

  // Throws QueueFullError when max_queue requests are waiting already.
  std::future<std::vector<Prediction>> submit(std::vector<std::string> titles);
  std::size_t depth() const;  // requests waiting, not counting the batch being run

 private:
  struct Job {
    std::vector<std::string> titles;
    std::vector<Prediction> results;
    std::size_t next = 0;  // first title not yet taken into a batch
    std::size_t done = 0;  // results filled
    bool failed = false;   // a batch with its titles failed: answered with the error
    std::chrono::steady_clock::time_point queued;
    std::promise<std::vector<Prediction>> promise;
  };
  struct Span {
    std::shared_ptr<Job> job;
    std::size_t begin, count;
  };
  struct Batch {
    std::vector<std::string> titles;
    std::vector<Span> spans;
  };

  void run();
  void wait_for_batch(std::unique_lock<std::mutex>& lock);
  Batch take_batch();
  void predict(Batch& batch);

  PredictFn predict_;
  BatchOptions options_;
  BatchFn on_batch_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Job>> queue_;
  std::size_t queued_titles_ = 0;  // titles in the queue not yet taken
  std::size_t last_requests_;      // requests in the previous batch (max_batch before the first)
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace newscls::serve
