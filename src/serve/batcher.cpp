#include "serve/batcher.h"

#include <algorithm>
#include <exception>

namespace newscls::serve {

MicroBatcher::MicroBatcher(PredictFn predict, BatchOptions options, BatchFn on_batch)
    : predict_(std::move(predict)), options_(options), on_batch_(std::move(on_batch)) {
  options_.max_batch = std::max<std::size_t>(1, options_.max_batch);
  last_requests_ = options_.max_batch;
  worker_ = std::thread([this] { run(); });
}

MicroBatcher::~MicroBatcher() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  worker_.join();
}

std::future<std::vector<Prediction>> MicroBatcher::submit(std::vector<std::string> titles) {
  auto job = std::make_shared<Job>();
  std::future<std::vector<Prediction>> result = job->promise.get_future();
  if (titles.empty()) {
    job->promise.set_value({});
    return result;
  }
  job->results.resize(titles.size());
  job->titles = std::move(titles);
  job->queued = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (queue_.size() >= options_.max_queue) {
      throw QueueFullError("the queue holds " + std::to_string(queue_.size()) + " requests already");
    }
    queued_titles_ += job->titles.size();
    queue_.push_back(std::move(job));
  }
  wake_.notify_one();
  return result;
}

std::size_t MicroBatcher::depth() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queue_.size();
}

void MicroBatcher::run() {
  for (;;) {
    Batch batch;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and nothing left to answer
      wait_for_batch(lock);
      batch = take_batch();
    }
    if (!batch.titles.empty()) predict(batch);  // empty when only failed requests' titles were left
  }
}

// Waits, with the lock held, until a full batch is queued, as many requests as the previous
// batch served are back, or the oldest request has waited max_wait. Without the middle
// rule, 32 one-title clients all back after a batch still waited max_wait for a 64th title.
// A previous batch of one request does not count: else one early request would start a batch
// of one, and the next, and requests arriving a little apart would never be gathered again.
void MicroBatcher::wait_for_batch(std::unique_lock<std::mutex>& lock) {
  const auto deadline = queue_.front()->queued + options_.max_wait;
  wake_.wait_until(lock, deadline, [this] {
    return stopping_ || queued_titles_ >= options_.max_batch || (last_requests_ > 1 && queue_.size() >= last_requests_);
  });
}

MicroBatcher::Batch MicroBatcher::take_batch() {
  Batch batch;
  while (!queue_.empty() && batch.titles.size() < options_.max_batch) {
    const std::shared_ptr<Job>& job = queue_.front();
    if (job->failed) {  // its answer, the error, is given: the rest of it is not worth a pass
      queued_titles_ -= job->titles.size() - job->next;
      queue_.pop_front();
      continue;
    }
    const std::size_t count = std::min(options_.max_batch - batch.titles.size(), job->titles.size() - job->next);
    for (std::size_t i = job->next; i < job->next + count; ++i) batch.titles.push_back(std::move(job->titles[i]));
    batch.spans.push_back({job, job->next, count});
    job->next += count;
    queued_titles_ -= count;
    if (job->next == job->titles.size()) queue_.pop_front();
  }
  last_requests_ = batch.spans.size();
  return batch;
}

void MicroBatcher::predict(Batch& batch) {
  std::vector<Prediction> predictions;
  try {
    predictions = predict_(batch.titles);
    if (predictions.size() != batch.titles.size()) throw std::runtime_error("the model returned a wrong count");
    if (on_batch_) on_batch_(batch.titles.size());  // counted as classified only once they are
  } catch (...) {
    // Every request with a title in this batch fails, and its titles not yet run are dropped.
    for (Span& span : batch.spans) {
      if (span.job->failed) continue;
      span.job->failed = true;
      span.job->promise.set_exception(std::current_exception());
    }
    return;
  }
  std::size_t offset = 0;
  for (Span& span : batch.spans) {
    Job& job = *span.job;
    std::move(predictions.begin() + static_cast<std::ptrdiff_t>(offset),
              predictions.begin() + static_cast<std::ptrdiff_t>(offset + span.count),
              job.results.begin() + static_cast<std::ptrdiff_t>(span.begin));
    offset += span.count;
    if (job.failed) continue;  // in an earlier batch
    job.done += span.count;
    if (job.done == job.titles.size()) job.promise.set_value(std::move(job.results));
  }
}

}  // namespace newscls::serve
