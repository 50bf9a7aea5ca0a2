// A share of one CPU for the supervisor's answers to the tool's seccomp notifications. Each
// answer costs jail CPU outside every limit of the jail (4 threads calling a denied syscall
// under --cpus 0.1 took jail's process to 40-100 % of a CPU); past the share of a window the
// listener rests until the window ends, and the tool's calls wait in the kernel, not the host.
#pragma once

#include <chrono>
#include <optional>

namespace jail {

class CpuBudget {
 public:
  using Clock = std::chrono::steady_clock;

  // At most `share` of this thread's CPU time per `window` of wall time.
  CpuBudget(std::chrono::milliseconds window, std::chrono::microseconds share);

  // After a piece of work on this thread: starts a rest when the window's share is used up.
  void charge();
  // Until when no more work may start (nullopt: now).
  [[nodiscard]] std::optional<Clock::time_point> rest_until() const;

 private:
  std::chrono::milliseconds window_;
  std::chrono::microseconds share_;
  bool started_ = false;
  Clock::time_point window_start_;
  std::chrono::nanoseconds cpu_at_start_{};
  std::optional<Clock::time_point> rest_until_;
};

}  // namespace jail
