// Waiting for a condition instead of for a time: a test polls what it needs (a process in /proc,
// a file, a cgroup's count) until it holds, and fails only at a generous deadline.
#pragma once

#include <chrono>
#include <thread>

#include "time_scale.hpp"

namespace jail_test {

// Polls `done` every `step` until it returns true or `timeout` (scaled) has passed; returns its
// last answer, so `ASSERT_TRUE(wait_until(…))` fails only when the condition never came.
template <typename Done>
bool wait_until(Done done, std::chrono::milliseconds timeout,
                std::chrono::milliseconds step = std::chrono::milliseconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + scaled(timeout);
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return done();
    std::this_thread::sleep_for(step);
  }
  return true;
}

}  // namespace jail_test
