// What the jail command says of the limit that ended or shaped a run: each kind named with its
// value and the flag that set it, and nothing when no limit was hit.
#include <gtest/gtest.h>

#include <string>

#include "limit_message.hpp"

namespace jail::runner {
namespace {

Result hit(Limit limit, Outcome outcome = Outcome::exited) {
  Result result;
  result.outcome = outcome;
  result.limit_hit = limit;
  return result;
}

std::string message(const Result& result) {
  return limit_message(result).value_or("<none>");
}

TEST(LimitMessage, NoLimitHitSaysNothing) {
  Result result;
  result.outcome = Outcome::signaled;
  result.limits.timeout = std::chrono::seconds(5);
  EXPECT_FALSE(limit_message(result).has_value());
}

TEST(LimitMessage, EachLimitIsNamedWithItsValueAndFlag) {
  Result timeout = hit(Limit::wall_time, Outcome::timeout);
  timeout.limits.timeout = std::chrono::milliseconds(1500);
  EXPECT_EQ(message(timeout),
            "the tool was stopped: it ran past its time limit of 1500 ms (--timeout)");
  timeout.limits.timeout = std::chrono::seconds(30);
  EXPECT_NE(message(timeout).find("of 30 s (--timeout)"), std::string::npos);

  Result cpu = hit(Limit::cpu_time, Outcome::timeout);
  cpu.limits.cpu_time = std::chrono::seconds(2);
  EXPECT_NE(message(cpu).find("CPU time limit of 2 s (--cpu-time)"), std::string::npos);

  Result pids = hit(Limit::pids);
  pids.limits.pids = 64;
  EXPECT_NE(message(pids).find("limit of 64 processes and threads (--pids)"), std::string::npos);

  Result file = hit(Limit::file_size, Outcome::signaled);
  file.limits.max_file_size = 1 << 20;
  EXPECT_NE(message(file).find("file size limit of 1.0 MiB (--max-file-size)"), std::string::npos);

  EXPECT_NE(message(hit(Limit::output)).find("--max-output"), std::string::npos);
}

// An OOM kill that ended the run is the tool's; one of another process in the jail, after which
// the tool went on, is told apart.
TEST(LimitMessage, MemorySaysWhoseProcessWasKilled) {
  Result tool = hit(Limit::memory, Outcome::oom);
  tool.limits.memory_bytes = 64u << 20;
  EXPECT_EQ(message(tool),
            "the tool was killed by the kernel's OOM killer: the jail reached its memory limit of "
            "64.0 MiB (--memory)");
  Result other = hit(Limit::memory, Outcome::exited);
  other.limits.memory_bytes = 64u << 20;
  EXPECT_NE(message(other).find("the tool went on"), std::string::npos) << message(other);
}

// A limit set with --rlimit is named by that flag, with its soft value — the one the kernel
// acts at — and wins over the limit's own flag, as it does in the tool; one with no value in the
// Result's limits (or an unlimited soft one) is still named.
TEST(LimitMessage, ARlimitSetWithoutItsOwnFlagIsNamedByTheFlagThatSetIt) {
  Result cpu = hit(Limit::cpu_time, Outcome::timeout);
  cpu.limits.rlimits.push_back({RLIMIT_CPU, 3, 4});
  EXPECT_EQ(message(cpu),
            "the tool was killed: it used up its CPU time limit of 3 s (--rlimit cpu)");
  cpu.limits.cpu_time = std::chrono::seconds(9);
  EXPECT_EQ(message(cpu),
            "the tool was killed: it used up its CPU time limit of 3 s (--rlimit cpu)");
  Result soft_unlimited = hit(Limit::cpu_time, Outcome::timeout);
  soft_unlimited.limits.rlimits.push_back({RLIMIT_CPU, RLIM_INFINITY, RLIM_INFINITY});
  EXPECT_EQ(message(soft_unlimited),
            "the tool was killed: it used up its CPU time limit (RLIMIT_CPU)");
  Result file = hit(Limit::file_size, Outcome::signaled);
  file.limits.rlimits.push_back({RLIMIT_FSIZE, 2048, 2048});
  EXPECT_NE(message(file).find("limit of 2.0 KiB (--rlimit fsize)"), std::string::npos)
      << message(file);
  EXPECT_EQ(message(hit(Limit::cpu_time, Outcome::timeout)),
            "the tool was killed: it used up its CPU time limit (RLIMIT_CPU)");
  EXPECT_EQ(message(hit(Limit::memory, Outcome::oom)),
            "the tool was killed by the kernel's OOM killer: the jail reached its memory limit "
            "(--memory)");
}

}  // namespace
}  // namespace jail::runner
