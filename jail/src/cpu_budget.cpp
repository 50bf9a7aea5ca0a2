#include "cpu_budget.hpp"

#include <time.h>

namespace jail {
namespace {

std::chrono::nanoseconds thread_cpu() {
  timespec now{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return std::chrono::seconds(now.tv_sec) + std::chrono::nanoseconds(now.tv_nsec);
}

}  // namespace

CpuBudget::CpuBudget(std::chrono::milliseconds window, std::chrono::microseconds share)
    : window_(window), share_(share) {}

void CpuBudget::charge() {
  const Clock::time_point now = Clock::now();
  // The first charge starts the first window: on the thread that does the work.
  if (!started_ || now >= window_start_ + window_) {
    started_ = true;
    window_start_ = now;
    cpu_at_start_ = thread_cpu();
    rest_until_.reset();
    return;
  }
  if (thread_cpu() - cpu_at_start_ > share_) rest_until_ = window_start_ + window_;
}

std::optional<CpuBudget::Clock::time_point> CpuBudget::rest_until() const {
  if (rest_until_ && Clock::now() < *rest_until_) return rest_until_;
  return std::nullopt;
}

}  // namespace jail
