// The supervisor keeps control under a hostile tool: a reader that never reads jail's stderr
// cannot hold up --timeout; a flood of denied calls costs jail a bounded share of a CPU, under
// --cpus 0.1 as without it; and a denial repeated a million times is one line and a count.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "../support/time_scale.hpp"
#include "run_jail.hpp"

namespace jail_test {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

json status_of(const std::string& path) {
  return json::parse(read_file(path).value_or("{}"), nullptr, false);
}

// A pipe whose buffer is already full, as a stderr nobody drains ends up: the next write blocks.
struct FullPipe {
  int read_end = -1;
  int write_end = -1;
  FullPipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return;
    read_end = fds[0];
    write_end = fds[1];
    const std::string chunk(4096, 'f');
    while (::write(write_end, chunk.data(), chunk.size()) > 0) {
    }
    // jail gets a blocking fd, as a shell's pipe is.
    ::fcntl(write_end, F_SETFL, 0);
  }
  ~FullPipe() {
    if (read_end >= 0) ::close(read_end);
    if (write_end >= 0) ::close(write_end);
  }
};

class SupervisorControl : public CallerTest {};

// Each denial used to be written to stderr where it happened, in the supervisor's loop: with the
// pipe full, the loop stopped, and the timeout with it (2 s became 25 s, or forever).
TEST_P(SupervisorControl, TheTimeoutHoldsWithStderrNobodyReads) {
  FullPipe stderr_pipe;
  ASSERT_GE(stderr_pipe.write_end, 0);
  TempDir work;
  const std::string status = work / "status.json";
  RunOptions options;
  options.stderr_fd = stderr_pipe.write_end;
  const auto start = Clock::now();
  const RunResult r = run(concat({probe_mount(),
                                  {"--status-file", status, "--timeout", "2s", "--kill-grace",
                                   "500ms", "--", probe("sup_flood"), "2", "0"}}),
                          options);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("[ measured ] --timeout 2s with a full stderr pipe and a denial flood: %.2f s\n",
              seconds);
  EXPECT_FALSE(r.timed_out) << "jail was still running after 30 s";
  EXPECT_EQ(r.exit_code, 124) << describe(r);
  const json s = status_of(status);
  EXPECT_EQ(s.value("outcome", ""), "timeout") << s.dump();
  EXPECT_GT(s["denials"].value("count", 0), 10) << s.dump();
  // 2 s, the 0.5 s grace and at most LogQueue's patience of 1 s at the exit.
  EXPECT_LT(seconds, scaled(6.0));
}

// Repeats are counted, not written: two lines for a flood, where 100,000 denials wrote 11.7 MB.
TEST_P(SupervisorControl, ARepeatedDenialIsOneLineAndACount) {
  TempDir work;
  const std::string status = work / "status.json";
  const std::string log = work / "jail.log";
  const RunResult r = run(
      concat({probe_mount(),
              {"--status-file", status, "--log-file", log, "--", probe("sup_flood"), "2", "1"}}));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const json s = status_of(status);
  const auto count = s["denials"].value("count", 0ULL);
  EXPECT_GT(count, 100U) << s.dump();
  const std::string text = read_file(log).value_or("");
  int lines = 0;
  std::string repeats;
  for (const std::string& line : split_lines(text)) {
    if (line.find("denied sethostname") == std::string::npos) continue;
    ++lines;
    if (line.find("more times") != std::string::npos) repeats = line;
  }
  EXPECT_EQ(lines, 2) << text;
  EXPECT_NE(repeats.find(" " + std::to_string(count - 1) + " more times"), std::string::npos)
      << "the count should be the status's less the line shown\n"
      << text << s.dump();
  EXPECT_LT(text.size(), 4096U) << text;
}

// A log collector filters denials on fields, not by parsing the message.
TEST_P(SupervisorControl, JsonLogLinesCarryADenialsFields) {
  TempDir work;
  const std::string log = work / "jail.jsonl";
  const RunResult r =
      run({"--log-format", "json", "--log-file", log, "--no-cwd", "--", "python3", "-c",
           "import socket\nfor _ in range(3):\n try: socket.sethostname('x')\n"
           " except OSError: pass"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const std::string text = read_file(log).value_or("");
  json first, repeats;
  for (const std::string& line : split_lines(text)) {
    const json entry = json::parse(line, nullptr, false);
    ASSERT_TRUE(entry.is_object()) << line;
    if (entry.value("event", "") != "denied") continue;
    (entry.contains("args") ? first : repeats) = entry;
  }
  EXPECT_EQ(first.value("syscall", ""), "sethostname") << text;
  EXPECT_EQ(first["args"].size(), 6U) << text;
  EXPECT_GT(first.value("pid", 0), 0) << text;
  EXPECT_TRUE(first.value("rule", "").starts_with("default.policy:")) << text;
  EXPECT_EQ(first.value("action", ""), "errno EPERM") << text;
  EXPECT_EQ(first.value("count", 0), 1) << text;
  EXPECT_EQ(repeats.value("syscall", ""), "sethostname") << text;
  EXPECT_EQ(repeats.value("count", 0), 2) << text;
  EXPECT_EQ(repeats.value("rule", ""), first.value("rule", "")) << text;
}

// A tool whose writes failed because a tmpfs of the jail filled up is told why: limit_hit names
// it, and the log says which mount and how full. A run with room to spare names nothing.
TEST_P(SupervisorControl, AFullTmpfsIsNamed) {
  TempDir work;
  const std::string status = work / "status.json";
  const RunResult full = run(
      {"--status-file", status, "--no-cwd", "--tmpfs-size", "4M", "--tmpfs", "/scratch:1M", "--",
       "sh", "-c", "head -c 8M /dev/zero > /tmp/big; echo tmp=$?; echo small > /scratch/x"});
  EXPECT_NE(full.out.find("tmp=1"), std::string::npos) << describe(full);
  json s = status_of(status);
  EXPECT_EQ(s.value("limit_hit", json()).dump(), "\"tmpfs\"") << s.dump();
  EXPECT_NE(full.err.find("the jail's tmpfs at /tmp ended full (4.0 of 4.0 MiB used)"),
            std::string::npos)
      << describe(full);
  EXPECT_EQ(full.err.find("tmpfs at /scratch"), std::string::npos) << describe(full);

  const RunResult roomy = run({"--status-file", status, "--no-cwd", "--tmpfs-size", "4M", "--",
                               "sh", "-c", "head -c 1M /dev/zero > /tmp/some"});
  ASSERT_EQ(roomy.exit_code, 0) << describe(roomy);
  s = status_of(status);
  EXPECT_TRUE(s["limit_hit"].is_null()) << s.dump();
  EXPECT_EQ(roomy.err.find("ended full"), std::string::npos) << describe(roomy);
}

// The kernel says nothing when an open fails with EMFILE; under --max-open-files jail counts a
// process's descriptors as it exits, so a tool (or a child of it) that ran out is named, and one
// with descriptors to spare is not.
TEST_P(SupervisorControl, ReachingTheOpenFilesLimitIsNamed) {
  TempDir work;
  const std::string status = work / "status.json";
  const RunResult tool =
      run(concat({probe_mount(),
                  {"--status-file", status, "--max-open-files", "16", "--", probe("lim_nofile")}}));
  EXPECT_EQ(tool.exit_code, 0) << describe(tool);
  EXPECT_NE(tool.out.find("result EMFILE"), std::string::npos) << describe(tool);
  json s = status_of(status);
  EXPECT_EQ(s.value("limit_hit", json()).dump(), "\"open_files\"") << s.dump();
  EXPECT_NE(tool.err.find("ended holding 16 open files, all its limit allows"), std::string::npos)
      << describe(tool);

  // A child that runs out while its parent goes on and ends well.
  const RunResult child =
      run(concat({probe_mount(),
                  {"--status-file", status, "--rlimit", "nofile=32", "--", "sh", "-c",
                   probe("lim_nofile") + " >/dev/null; echo parent=$?"}}));
  EXPECT_NE(child.out.find("parent=0"), std::string::npos) << describe(child);
  s = status_of(status);
  EXPECT_EQ(s.value("limit_hit", json()).dump(), "\"open_files\"") << s.dump();

  const RunResult roomy = run({"--status-file", status, "--max-open-files", "64", "--", "sh", "-c",
                               "exec 3</dev/null 4</dev/null; echo fine"});
  EXPECT_EQ(roomy.exit_code, 0) << describe(roomy);
  s = status_of(status);
  EXPECT_TRUE(s["limit_hit"].is_null()) << s.dump();
  EXPECT_EQ(roomy.err.find("open files"), std::string::npos) << describe(roomy);
}

// Under the limit the filter sends exit_group to the supervisor, which holds the listener only
// once the tool has started: a start that fails after the filter is in must not wait for it.
TEST_P(SupervisorControl, AFailedStartUnderTheOpenFilesLimitEndsAtOnce) {
  TempDir work;
  write_file(work / "not-executable", "#!/bin/sh\necho ran\n", 0644);
  RunOptions options;
  options.timeout = std::chrono::seconds(20);
  const RunResult r = run(
      {"--bind", work.path() + ":/work", "--max-open-files", "16", "--", "/work/not-executable"},
      options);
  EXPECT_FALSE(r.timed_out) << "jail was still running after 20 s";
  EXPECT_EQ(r.exit_code, 126) << describe(r);

  // A policy that leaves exit out cannot end such a start: refused before anything runs.
  write_file(work / "no-exit.policy", "allow execve write exit_group read\ndefault errno EPERM\n");
  const RunResult refused =
      run({"--policy", work / "no-exit.policy", "--max-open-files", "16", "--", "true"}, options);
  EXPECT_EQ(refused.exit_code, 125) << describe(refused);
  EXPECT_NE(refused.err.find("must allow exit plainly (not log) under an open-files limit"),
            std::string::npos)
      << describe(refused);
}

JAIL_INSTANTIATE_FOR_CALLERS(SupervisorControl);

// utime + stime of the process itself (its threads, not its children), in seconds.
double own_cpu_seconds(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close_paren = text.rfind(')');
  if (close_paren == std::string::npos) return -1;
  std::istringstream fields(text.substr(close_paren + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14 || i == 15) ticks += std::stod(field);
  }
  return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// Four threads calling a denied syscall as fast as they can, under --cpus 0.1: the tool's own
// CPU is capped by its cgroup, and jail's answers to it (outside every cgroup of the jail) by
// the supervisor's budget, 10 ms of CPU per 100 ms. It took 40-100 % of a CPU before.
TEST(SupervisorBudget, ADenialFloodCostsJailATenthOfACpu) {
  if (::geteuid() != 0) GTEST_FAIL() << "--cpus needs a cgroup: run as root (CI does)";
  TempDir work;
  const std::string status = work / "status.json";
  RunOptions options;
  options.cwd = work.path();
  JailProcess jail(concat({probe_mount(),
                           {"-q", "--status-file", status, "--cpus", "0.1", "--timeout", "4s", "--",
                            probe("sup_flood"), "4", "0"}}),
                   options);
  ASSERT_TRUE(jail.wait_for_stdout("flooding", 20s));
  const auto start = Clock::now();
  const double cpu_at_start = own_cpu_seconds(jail.pid());
  double cpu = cpu_at_start;
  // The last reading before jail exits: polled, since /proc/<pid>/stat goes with the process.
  while (jail.running()) {
    const double now = own_cpu_seconds(jail.pid());
    if (now < 0) break;
    cpu = now;
    if (Clock::now() - start > scaled(3s)) break;
    std::this_thread::sleep_for(50ms);  // a sampling period, not a wait for readiness
  }
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  const RunResult r = jail.wait(30s);
  const json s = status_of(status);
  const double used = cpu - cpu_at_start;
  std::printf(
      "[ measured ] denial flood under --cpus 0.1: jail used %.3f s of CPU in %.2f s (%.0f %% of "
      "a CPU); %llu denials answered\n",
      used, wall, 100 * used / wall, s["denials"].value("count", 0ULL));
  EXPECT_EQ(s.value("outcome", ""), "timeout") << s.dump() << describe(r);
  ASSERT_GT(wall, 1.0);
  EXPECT_GT(s["denials"].value("count", 0ULL), 100U) << s.dump();
  // The budget is 10 %; the rest is what the main and log threads and the kernel's side of
  // each notification take.
  EXPECT_LT(used / wall, 0.2) << "jail used " << used << " s of CPU in " << wall << " s";
}

// VmHWM of a running process in KiB: the most memory it has held so far; -1 once it is gone.
long peak_rss_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("VmHWM:")) return std::stol(line.substr(6));
  }
  return -1;
}

// A tool that sprays distinct ioctl requests and unknown syscall numbers took `policy learn` to
// 1.7 GB and made it fail (exit 125, no policy). Now learning keeps bounded state, never answers
// a spray with an unconditional allow, and the policy still refuses what the tool never did.
TEST_P(SupervisorControl, LearningASprayingToolStaysSmallAndStrict) {
  const std::string learned = cwd_ / "learned.policy";
  // A base that refuses nothing: whatever the check below sees refused, the learned rules refused.
  write_file(cwd_ / "open.policy", "default allow\n");
  RunOptions options;
  options.caller = caller();
  options.cwd = cwd_.path();
  JailProcess learn(
      concat({{"policy", "learn", "--no-cwd", "--base", cwd_ / "open.policy", "-o", learned},
              probe_mount(),
              {"--", probe("sup_spray"), "20000", "2000"}}),
      options);
  long peak = 0;
  while (learn.running()) {
    const long now = peak_rss_kib(learn.pid());
    if (now < 0) break;
    peak = std::max(peak, now);
    std::this_thread::sleep_for(20ms);  // a sampling period, not a wait for readiness
  }
  const RunResult r = learn.wait(60s);
  std::printf(
      "[ measured ] policy learn on 20000 ioctl requests and 2000 unknown numbers: peak "
      "RSS %ld KiB\n",
      peak);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_GT(peak, 0);
  EXPECT_LE(peak, 64 * 1024) << "KiB";
  const std::string text = read_file(learned).value_or("");
  EXPECT_NE(text.find("# REVIEW: ioctl was called with more than 256 distinct arg1 values"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("allow ioctl if arg1 in {0x10000, 0x10001,"), std::string::npos) << text;
  EXPECT_NE(text.find("#   1000 (1 call)"), std::string::npos) << text;
  for (const std::string& line : split_lines(text)) {
    const bool unconditional =
        line.starts_with("allow ioctl") && line.find(" if ") == std::string::npos;
    EXPECT_FALSE(unconditional) << "an unconditional ioctl rule: " << line;
  }
  const RunResult check =
      run(concat({probe_mount(),
                  {"--no-cwd", "--policy", learned, "--", probe("sup_spray"), "0", "0", "check"}}));
  ASSERT_EQ(check.exit_code, 0) << describe(check);
  EXPECT_NE(check.out.find("ptrace ret=-1 errno=1\n"), std::string::npos) << describe(check);
  EXPECT_NE(check.out.find("unused ioctl ret=-1 errno=1\n"), std::string::npos)
      << "EPERM from the policy, not the kernel's EBADF\n"
      << describe(check);
}

}  // namespace
}  // namespace jail_test
