// Work split over threads, with the first exception of any worker rethrown to the caller
// (a throw inside a bare std::thread would terminate the program).
//
//   parallel_for(titles.size(), threads, [&](std::size_t begin, std::size_t end, int worker) {
//     for (std::size_t i = begin; i < end; ++i) out[i] = predict(titles[i]);
//   });
#pragma once

#include <cstddef>
#include <functional>

namespace newscls {

// Splits [0, n) into contiguous ranges of near-equal size, one per worker (ids 0..), at most
// `threads` workers and each with at least `min_per_worker` items (so small inputs stay on
// one thread); runs them concurrently, the caller's thread running the first, and waits.
void parallel_for(std::size_t n, int threads,
                  const std::function<void(std::size_t begin, std::size_t end, int worker)>& body,
                  std::size_t min_per_worker = 1);

// The worker count a --threads value asks for: the value, or every core for 0 (or less). The
// app calls it once, where it parses --threads; every layer below takes the count as given.
int resolve_thread_count(int requested);
// A resolved count as a workflow takes it: UsageError for one below 1 (a caller that passed
// --threads on unresolved).
int given_thread_count(int threads);

// Runs task(i) for i in [0, count) on `threads` workers that take the next index as they
// finish one (for tasks of unequal cost, such as trees).
void parallel_tasks(std::size_t count, int threads, const std::function<void(std::size_t index, int worker)>& task);

}  // namespace newscls
