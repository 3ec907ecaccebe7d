#include <atomic>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "serve/batcher.h"

namespace newscls::serve {
namespace {

using namespace std::chrono_literals;

// A model that labels each title with its length, records batch sizes, and can be held
// inside predict until released (to let requests pile up behind a running batch).
class FakeModel {
 public:
  std::vector<Prediction> operator()(const std::vector<std::string>& titles) {
    std::unique_lock<std::mutex> lock(mutex_);
    sizes_.push_back(titles.size());
    entered_.notify_all();
    released_.wait(lock, [this] { return !held_; });
    if (fail_) throw std::runtime_error("model failed");
    std::vector<Prediction> out;
    for (const std::string& t : titles) out.push_back({static_cast<int>(t.size()), 1.0f, {}});
    return out;
  }
  void hold() {
    std::lock_guard<std::mutex> l(mutex_);
    held_ = true;
  }
  void release() {
    {
      std::lock_guard<std::mutex> l(mutex_);
      held_ = false;
    }
    released_.notify_all();
  }
  void fail() {
    std::lock_guard<std::mutex> l(mutex_);
    fail_ = true;
  }
  void wait_for_batches(std::size_t n) {
    std::unique_lock<std::mutex> lock(mutex_);
    entered_.wait(lock, [&] { return sizes_.size() >= n; });
  }
  std::vector<std::size_t> sizes() {
    std::lock_guard<std::mutex> l(mutex_);
    return sizes_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable entered_, released_;
  bool held_ = false, fail_ = false;
  std::vector<std::size_t> sizes_;
};

MicroBatcher make(FakeModel& model, BatchOptions options) {
  return MicroBatcher([&model](const auto& titles) { return model(titles); }, options);
}

std::vector<int> labels(std::vector<Prediction> p) {
  std::vector<int> out;
  for (const Prediction& x : p) out.push_back(x.label);
  return out;
}

TEST(MicroBatcher, GathersRequestsQueuedBehindARunningBatch) {
  FakeModel model;
  model.hold();
  auto b = make(model, {64, 0ms, 256});
  auto first = b.submit({"a"});
  model.wait_for_batches(1);
  std::vector<std::future<std::vector<Prediction>>> rest;
  for (int i = 1; i <= 5; ++i) rest.push_back(b.submit({std::string(static_cast<std::size_t>(i), 'x')}));
  EXPECT_EQ(b.depth(), 5u);
  model.release();
  EXPECT_EQ(labels(first.get()), std::vector<int>{1});
  for (int i = 1; i <= 5; ++i) EXPECT_EQ(labels(rest[static_cast<std::size_t>(i - 1)].get()), std::vector<int>{i});
  EXPECT_EQ(model.sizes(), (std::vector<std::size_t>{1, 5}));
}

TEST(MicroBatcher, WaitsUpToMaxWaitForABatchToFill) {
  FakeModel model;
  auto b = make(model, {3, 2s, 256});
  auto one = b.submit({"a"});
  auto two = b.submit({"bb"});
  auto three = b.submit({"ccc"});  // the batch is full: it runs without waiting 2 s
  EXPECT_EQ(three.wait_for(1s), std::future_status::ready);
  EXPECT_EQ(labels(one.get()), std::vector<int>{1});
  EXPECT_EQ(model.sizes(), (std::vector<std::size_t>{3}));
}

TEST(MicroBatcher, StartsOnceAsManyRequestsWaitAsThePreviousBatchServed) {
  FakeModel model;
  model.hold();
  auto b = make(model, {8, 10s, 256});
  auto first = b.submit(std::vector<std::string>(4, "a"));
  auto second = b.submit(std::vector<std::string>(4, "a"));  // two requests fill the first batch
  model.wait_for_batches(1);
  auto two = b.submit({"bb"});
  auto three = b.submit({"ccc"});
  model.release();
  // The previous batch served two requests, so these two start at once, not after 10 s.
  ASSERT_EQ(three.wait_for(5s), std::future_status::ready);
  auto four = b.submit({"dddd"});
  EXPECT_EQ(four.wait_for(200ms), std::future_status::timeout);  // waits for a second request
  auto five = b.submit({"eeeee"});
  ASSERT_EQ(five.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(labels(four.get()), std::vector<int>{4});
  EXPECT_EQ(model.sizes(), (std::vector<std::size_t>{8, 2, 2}));
}

// After a batch of one request, a lone request still waits to be gathered with others.
TEST(MicroBatcher, ABatchOfOneDoesNotStartTheNextAtOnce) {
  FakeModel model;
  auto b = make(model, {8, 2s, 256});
  b.submit(std::vector<std::string>(8, "a")).get();  // one request, a full batch
  auto one = b.submit({"b"});
  EXPECT_EQ(one.wait_for(300ms), std::future_status::timeout);
  auto two = b.submit({"cc"});
  ASSERT_EQ(two.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(model.sizes(), (std::vector<std::size_t>{8, 2}));
}

TEST(MicroBatcher, SplitsALargeRequestAndKeepsTheOrder) {
  FakeModel model;
  auto b = make(model, {4, 0ms, 256});
  std::vector<std::string> titles;
  for (std::size_t i = 1; i <= 10; ++i) titles.push_back(std::string(i, 'x'));
  EXPECT_EQ(labels(b.submit(titles).get()), (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(model.sizes(), (std::vector<std::size_t>{4, 4, 2}));
}

TEST(MicroBatcher, RefusesWhenTheQueueIsFull) {
  FakeModel model;
  model.hold();
  auto b = make(model, {1, 0ms, 2});
  auto running = b.submit({"a"});
  model.wait_for_batches(1);
  auto q1 = b.submit({"b"});
  auto q2 = b.submit({"c"});
  EXPECT_THROW(b.submit({"d"}), QueueFullError);
  model.release();
  EXPECT_EQ(labels(q2.get()), std::vector<int>{1});
  EXPECT_NO_THROW(b.submit({"e"}).get());  // room again once the queue drained
}

TEST(MicroBatcher, AModelErrorReachesEveryRequestOfTheBatch) {
  FakeModel model;
  model.fail();
  auto b = make(model, {8, 0ms, 256});
  auto f = b.submit({"a", "b"});
  EXPECT_THROW(f.get(), std::runtime_error);
}

TEST(MicroBatcher, AFailedRequestsOtherTitlesAreNotRun) {
  FakeModel model;
  model.fail();
  auto b = make(model, {2, 0ms, 256});
  auto f = b.submit({"a", "b", "c", "d", "e", "f"});
  EXPECT_THROW(f.get(), std::runtime_error);
  EXPECT_THROW(b.submit({"g"}).get(), std::runtime_error);  // runs after whatever is left of f
  EXPECT_EQ(model.sizes(), (std::vector<std::size_t>{2, 1})) << "f's titles after its failed batch were run";
}

TEST(MicroBatcher, DestructionAnswersWhatIsQueued) {
  FakeModel model;
  std::future<std::vector<Prediction>> f;
  {
    auto b = make(model, {100, 10s, 256});  // would wait 10 s for a full batch
    f = b.submit({"abc"});
  }
  ASSERT_EQ(f.wait_for(0s), std::future_status::ready);
  EXPECT_EQ(labels(f.get()), std::vector<int>{3});
}

}  // namespace
}  // namespace newscls::serve
