#include <atomic>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "newscls/core/error.h"
#include "newscls/core/parallel.h"

namespace newscls {
namespace {

TEST(Parallel, ForCoversEveryIndexOnceInContiguousRanges) {
  for (std::size_t n : {0u, 1u, 7u, 1000u}) {
    std::vector<int> seen(n, 0);
    std::atomic<int> calls{0};
    parallel_for(n, 3, [&](std::size_t begin, std::size_t end, int) {
      ++calls;
      for (std::size_t i = begin; i < end; ++i) ++seen[i];
    });
    for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(seen[i], 1) << "n=" << n << " i=" << i;
    EXPECT_LE(calls.load(), 3);
  }
}

TEST(Parallel, ForKeepsSmallInputsOnOneWorker) {
  std::atomic<int> calls{0};
  parallel_for(
      100, 8, [&](std::size_t, std::size_t, int) { ++calls; }, /*min_per_worker=*/64);
  EXPECT_EQ(calls.load(), 1);
}

TEST(Parallel, ForHandsAWorkersExceptionToTheCaller) {
  // The throw happens on a worker thread, not the caller's (worker 0 runs on the caller).
  EXPECT_THROW(parallel_for(4, 4,
                            [](std::size_t begin, std::size_t, int worker) {
                              if (worker == 3) throw std::runtime_error("worker failed at " + std::to_string(begin));
                            }),
               std::runtime_error);
}

TEST(Parallel, TasksRunEachIndexOnceAndRethrow) {
  std::vector<std::atomic<int>> seen(50);
  parallel_tasks(50, 4, [&](std::size_t i, int worker) {
    EXPECT_GE(worker, 0);
    EXPECT_LT(worker, 4);
    ++seen[i];
  });
  for (auto& s : seen) EXPECT_EQ(s.load(), 1);
  EXPECT_THROW(parallel_tasks(50, 4,
                              [](std::size_t i, int) {
                                if (i == 17) throw std::invalid_argument("task 17");
                              }),
               std::invalid_argument);
}

// The app resolves --threads once; a layer below takes the count as given and refuses 0.
TEST(Parallel, ThreadCountsAreResolvedOnceAndTakenAsGiven) {
  EXPECT_EQ(resolve_thread_count(3), 3);
  EXPECT_GE(resolve_thread_count(0), 1);
  EXPECT_EQ(given_thread_count(2), 2);
  EXPECT_THROW(given_thread_count(0), UsageError);
}

}  // namespace
}  // namespace newscls
