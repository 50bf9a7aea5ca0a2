// --trace-timing: the breakdown of where start-up and tear-down time went, on stderr at the end,
// every phase in causal order with times that never go back; nothing of it without the flag.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "../support/time_scale.hpp"
#include "run_jail.hpp"

namespace jail_test {
namespace {

// Every phase a successful run reaches, in the order they happen.
const std::vector<std::string> kPhases = {
    "launch",         "spec checked",     "policy compiled",
    "cgroup created", "cloned",           "id maps written",
    "released",       "mounts done",      "pivot_root done",
    "namespaces set", "identity dropped", "seccomp loaded",
    "exec",           "tool exited",      "jail exited",
    "cgroup removed",
};
// Under --runtime runsc: jail's own phases around gVisor's start. runsc is started ("cloned")
// before the policy and the bundle exist, and waits for them ("runsc released"); "jail exited"
// is runsc's exit.
const std::vector<std::string> kRunscPhases = {
    "launch",         "spec checked",   "cgroup created", "cloned",
    "bundle written", "runsc released", "jail exited",    "cgroup removed",
};

struct Line {
  double ms = 0;
  double delta = 0;
  std::string phase;
};

// The lines after the "jail: timing" header: "jail: <ms> <+delta>  <phase>".
std::vector<Line> timing_lines(const std::string& err) {
  std::vector<Line> lines;
  bool in_block = false;
  for (const std::string& text : split_lines(err)) {
    if (text.starts_with("jail: timing")) {
      in_block = true;
      continue;
    }
    if (!in_block || !text.starts_with("jail: ")) continue;
    std::istringstream fields(text.substr(6));
    Line line;
    if (!(fields >> line.ms >> line.delta)) continue;
    std::getline(fields >> std::ws, line.phase);
    lines.push_back(line);
  }
  return lines;
}

// The breakdown lists `expected`, from 0, with times that never go back and deltas that add up.
void expect_phases_in_order(const RunResult& result, const std::vector<std::string>& expected) {
  const std::vector<Line> lines = timing_lines(result.err);
  std::vector<std::string> phases;
  for (const Line& line : lines) phases.push_back(line.phase);
  EXPECT_EQ(phases, expected) << result.err;
  ASSERT_FALSE(lines.empty()) << result.err;
  EXPECT_EQ(lines.front().ms, 0) << result.err;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    EXPECT_GE(lines[i].ms, lines[i - 1].ms)
        << lines[i].phase << " is earlier than " << lines[i - 1].phase << ":\n"
        << result.err;
    EXPECT_NEAR(lines[i].delta, lines[i].ms - lines[i - 1].ms, 0.002) << result.err;
  }
  // A start-up that takes a minute would be a hang, not a measurement.
  EXPECT_LT(lines.back().ms, scaled(60'000.0)) << result.err;
}

class TraceTiming : public CallerTest {};

TEST_P(TraceTiming, ListsEveryPhaseInOrderWithTimesThatNeverGoBack) {
  // As root the run gets a cgroup with limits, the full default isolation.
  std::vector<std::string> args = {"--trace-timing", "--no-cwd"};
  if (as_root()) args = concat({args, {"--memory", "128M", "--pids", "32"}});
  const RunResult result = run(concat({args, {"--", "/bin/sh", "-c", "echo out; exit 3"}}));
  ASSERT_EQ(result.exit_code, 3) << describe(result);
  EXPECT_EQ(result.out, "out\n") << "the breakdown must not reach the tool's stdout";

  expect_phases_in_order(result, kPhases);
}

TEST(TraceTimingRunsc, ListsJailsPhasesAroundGvisorsStart) {
  if (::geteuid() != 0 || !std::filesystem::exists("/usr/bin/runsc")) {
    GTEST_FAIL() << "needs root and runsc (scripts/install-deps.sh installs it); CI has both";
  }
  const RunResult result = run_jail({"--runtime", "runsc", "--trace-timing", "--no-cwd", "--",
                                     "/bin/sh", "-c", "echo out; exit 3"},
                                    {});
  ASSERT_EQ(result.exit_code, 3) << describe(result);
  EXPECT_EQ(result.out, "out\n") << "the breakdown must not reach the tool's stdout";
  expect_phases_in_order(result, kRunscPhases);
}

TEST_P(TraceTiming, IsInTheStatusJsonAndAbsentWithoutTheFlag) {
  const std::string status = cwd_ / "status.json";
  RunResult result = run({"--no-cwd", "--trace-timing", "--status-file", status, "--", "true"});
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  const std::optional<std::string> with = read_file(status);
  ASSERT_TRUE(with) << describe(result);
  EXPECT_NE(with->find("\"timings\":[[\"launch\",0"), std::string::npos) << *with;
  EXPECT_NE(with->find("[\"cgroup removed\","), std::string::npos) << *with;

  result = run({"--no-cwd", "--status-file", status, "--", "true"});
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  const std::optional<std::string> without = read_file(status);
  ASSERT_TRUE(without) << describe(result);
  EXPECT_EQ(without->find("timings"), std::string::npos) << *without;
  EXPECT_EQ(result.err.find("jail: timing"), std::string::npos) << result.err;
}

JAIL_INSTANTIATE_FOR_CALLERS(TraceTiming);

}  // namespace
}  // namespace jail_test
