// Resource abuse the limits suite does not cover: fd exhaustion, thread storm, output flood,
// disk fill, a double-forked daemon, setsid + ignored signals, sleeping with stdout closed.
// Each asserts the limit holds, is named where jail names it, and that nothing survives.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <random>
#include <thread>

#include "../support/time_scale.hpp"
#include "../support/wait_until.hpp"
#include "support.hpp"

namespace jail_security {
namespace {

class Resources : public SecurityTest {
 protected:
  // Waits up to 3 s (scaled) for every host process carrying `token` to be gone.
  static std::vector<int> survivors(const std::string& token) {
    std::vector<int> left;
    (void)wait_until(
        [&] {
          left = host_processes_with(token);
          return left.empty();
        },
        3s, 100ms);
    return left;
  }
  static std::string token(const char* prefix) {
    std::random_device rd;
    return std::string(prefix) + std::to_string(rd());
  }
  // A non-root caller without a delegated cgroup cannot have cgroup limits: jail must refuse
  // (fail closed), not run unlimited.
  static bool refused_cgroup_limit(const Outcome& o) {
    return o.run.exit_code == 125 && o.outcome() == "setup_error";
  }
};

TEST_P(Resources, FdExhaustionStopsAtMaxOpenFiles) {
  Outcome o = jail({"--max-open-files", "64"}, {sec_probe("sec_res"), "fds"});
  ASSERT_EQ(o.run.exit_code, 0) << o.describe();
  const int opened = std::atoi(o.value("opened").c_str());
  const bool contained = o.value("open_after_limit") == "EMFILE" && opened > 0 && opened <= 61 &&
                         o.outcome() == "exited";
  row("fd_exhaustion --max-open-files 64", "EMFILE before 64 fds, exited 0",
      "opened=" + o.value("opened") + " " + o.value("open_after_limit"), contained);
  EXPECT_TRUE(contained) << o.describe();
}

TEST_P(Resources, ThreadStormStopsAtPids) {
  if (runsc()) {
    // Under gVisor the tool's threads are the sentry's, not host tasks: --pids bounds gVisor's
    // own host threads, and 32 is less than the sandbox needs to start. That must be a clear
    // setup error, not a half-started sandbox.
    Outcome o = jail({"--pids", "32"}, {sec_probe("sec_res"), "threads"});
    const bool refused = o.run.exit_code == 125 && o.outcome() == "setup_error";
    row("thread_storm --pids 32", "runsc: too small a pids limit is a setup error",
        std::to_string(o.run.exit_code) + " " + o.outcome(), refused);
    EXPECT_TRUE(refused) << o.describe();
    return;
  }
  Outcome o = jail({"--pids", "32"}, {sec_probe("sec_res"), "threads"});
  // runsc's own Go runtime needs threads from the same budget, so jail refuses --pids there.
  if ((!as_root() || runsc()) && refused_cgroup_limit(o)) {
    row("thread_storm --pids 32", "setup_error without a delegated cgroup", "setup_error", true);
    return;
  }
  const int threads = std::atoi(o.value("threads").c_str());
  const bool contained = o.run.exit_code == 0 &&
                         o.value("pthread_create_after_limit") == "EAGAIN" && threads > 0 &&
                         threads < 32;
  row("thread_storm --pids 32", "EAGAIN before 32 tasks, exit 0",
      "exit=" + std::to_string(o.run.exit_code) + " threads=" + o.value("threads") + " " +
          o.value("pthread_create_after_limit") +
          " limit_hit=" + (o.status.is_object() ? o.status["limit_hit"].dump() : "?"),
      contained);
  EXPECT_TRUE(contained) << o.describe();
}

TEST_P(Resources, OutputFloodIsCutAtMaxOutput) {
  // The probe gives up after 64 MiB, so a limit that is not enforced shows as exit 3.
  Outcome o = jail({"--max-output", "1M"}, {sec_probe("sec_res"), "flood"});
  const std::size_t total = o.run.out.size() + o.run.err.size();
  const bool limit_named = o.status.is_object() && (o.status["limit_hit"] == "output" ||
                                                    o.status.value("output_truncated", false));
  const bool contained = total <= (1u << 20) + 4096 && limit_named && !o.run.timed_out;
  row("output_flood --max-output 1M", "<= 1 MiB relayed, limit named",
      std::to_string(o.run.out.size()) + " bytes, exit " + std::to_string(o.run.exit_code) +
          " limit_hit=" + (o.status.is_object() ? o.status["limit_hit"].dump() : "?"),
      contained);
  EXPECT_TRUE(contained) << "stdout " << o.run.out.size() << " bytes, stderr:\n"
                         << o.run.err.substr(0, 2000) << "\nstatus: " << o.status.dump();
}

TEST_P(Resources, DiskFillStopsAtTmpfsSize) {
  Outcome o = jail({"--tmpfs-size", "4M"}, {sec_probe("sec_res"), "disk", "/tmp/fill"});
  ASSERT_EQ(o.run.exit_code, 0) << o.describe();
  const unsigned long long filled = std::strtoull(o.value("filled").c_str(), nullptr, 10);
  const bool contained = o.value("write_after_full") == "ENOSPC" && filled <= (4ull << 20);
  row("disk_fill --tmpfs-size 4M", "ENOSPC at <= 4 MiB",
      "filled=" + o.value("filled") + " " + o.value("write_after_full"), contained);
  EXPECT_TRUE(contained) << o.describe();
}

TEST_P(Resources, DoubleForkedDaemonDoesNotOutliveTheJail) {
  const std::string t = token("jail-sec-daemon-");
  Outcome o = jail({}, {sec_probe("sec_res"), "daemon", t});
  ASSERT_EQ(o.run.exit_code, 0) << o.describe();
  ASSERT_EQ(o.value("daemon"), "started") << o.describe();
  const std::vector<int> left = survivors(t);
  row("double_fork_daemon", "no process left on the host",
      left.empty() ? "none left" : std::to_string(left.size()) + " left", left.empty());
  EXPECT_TRUE(left.empty()) << "host pid " << (left.empty() ? 0 : left[0]) << "\n" << o.describe();
  for (int pid : left) kill(pid, SIGKILL);
}

TEST_P(Resources, SetsidAndIgnoredSignalsEndAtTimeout) {
  const std::string t = token("jail-sec-stubborn-");
  const auto begin = std::chrono::steady_clock::now();
  Outcome o =
      jail({"--timeout", "1s", "--kill-grace", "500ms"}, {sec_probe("sec_res"), "stubborn", t});
  const auto took = std::chrono::steady_clock::now() - begin;
  const std::vector<int> left = survivors(t);
  const bool contained = o.run.exit_code == 124 && o.outcome() == "timeout" && left.empty() &&
                         took < scaled(15s) && o.value("ready") == "yes";
  row("setsid_ignore_signals --timeout 1s", "exit 124 timeout, nothing left",
      std::to_string(o.run.exit_code) + " " + o.outcome() + " left=" + std::to_string(left.size()),
      contained);
  EXPECT_TRUE(contained) << o.describe();
  for (int pid : left) kill(pid, SIGKILL);
}

TEST_P(Resources, SleepingWithStdoutClosedEndsAtTimeout) {
  const std::string t = token("jail-sec-mute-");
  const auto begin = std::chrono::steady_clock::now();
  Outcome o = jail({"--timeout", "1s", "--kill-grace", "500ms"}, {sec_probe("sec_res"), "mute", t});
  const auto took = std::chrono::steady_clock::now() - begin;
  const std::vector<int> left = survivors(t);
  const bool contained =
      o.run.exit_code == 124 && o.outcome() == "timeout" && left.empty() && took < scaled(15s);
  row("closed_stdout_sleep --timeout 1s", "exit 124 timeout, nothing left",
      std::to_string(o.run.exit_code) + " " + o.outcome() + " in " +
          std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()) +
          " ms",
      contained);
  EXPECT_TRUE(contained) << o.describe();
  for (int pid : left) kill(pid, SIGKILL);
}

JAIL_SECURITY_INSTANTIATE(Resources);

}  // namespace
}  // namespace jail_security
