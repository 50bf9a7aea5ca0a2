// The supervisor serves a jail whatever its host does meanwhile: a host that reads the tool's
// output to its end before waiting, waits late, reaps every child it has, assigns over a running
// Process, has no reader on its stdout, or sends the tool signals of its own.
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "../support/proc_stat.hpp"
#include "../support/time_scale.hpp"
#include "../support/wait_until.hpp"
#include "jail/error.hpp"
#include "jail/launch.hpp"
#include "library_support.hpp"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

using jail_test::scaled;
using jail_test::shell;

// Reads `fd` to its end, as a host that collects a tool's output before it waits; gives up after
// `limit` (the test's own guard, far beyond what any case needs).
std::string read_to_end(int fd, std::chrono::milliseconds limit) {
  std::string text;
  const auto deadline = Clock::now() + limit;
  char buffer[4096];
  while (Clock::now() < deadline) {
    pollfd ready{fd, POLLIN, 0};
    if (::poll(&ready, 1, 50) <= 0) continue;
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

// Reads `fd` until `text` has come (true), or gives up after `limit` (scaled).
bool read_until(int fd, const std::string& text, std::chrono::milliseconds limit) {
  std::string seen;
  const auto deadline = Clock::now() + scaled(limit);
  char buffer[256];
  while (seen.find(text) == std::string::npos && Clock::now() < deadline) {
    pollfd ready{fd, POLLIN, 0};
    if (::poll(&ready, 1, 50) <= 0) continue;
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    seen.append(buffer, static_cast<std::size_t>(n));
  }
  return seen.find(text) != std::string::npos;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

bool process_gone(pid_t pid) {
  return ::kill(pid, 0) != 0 && errno == ESRCH;
}

TEST(LibrarySupervision, TheTimeoutHoldsWhileTheHostReadsTheOutputToItsEnd) {
  jail::Spec spec = shell("sleep 30; echo late");
  spec.limits.timeout = 1000ms;
  spec.limits.kill_grace = 200ms;
  const auto start = Clock::now();
  jail::Process process = jail::launch(spec);
  const std::string out = read_to_end(process.stdout_fd(), 20s);
  EXPECT_LT(seconds_since(start), scaled(10.0)) << "the tool outlived its 1 s timeout";
  const jail::Result result = process.wait();
  EXPECT_EQ(out, "");
  EXPECT_EQ(result.outcome, jail::Outcome::timeout) << jail::to_json(result);
}

TEST(LibrarySupervision, ADeniedCallIsAnsweredWhileTheHostReads) {
  // The default policy refuses a set-uid chmod through the supervisor (a seccomp notification):
  // the tool waits for that answer while the host waits for the tool's output.
  jail::Process process =
      jail::launch(shell("touch /tmp/x; chmod u+s /tmp/x; echo after-chmod=$?"));
  const std::string out = read_to_end(process.stdout_fd(), 20s);
  const jail::Result result = process.wait();
  EXPECT_EQ(out, "after-chmod=1\n") << jail::to_json(result);
  EXPECT_EQ(result.outcome, jail::Outcome::exited) << jail::to_json(result);
  EXPECT_GE(result.denials.count, 1u) << jail::to_json(result);
}

TEST(LibrarySupervision, WaitingLateGivesTheRunsOwnEndAndTime) {
  jail::Spec spec = shell("echo done");
  const std::chrono::milliseconds timeout = scaled(1000ms);
  spec.limits.timeout = timeout;
  const auto start = Clock::now();
  jail::Process process = jail::launch(spec);
  // The run ends on its own: all its output is there and the jail's init has ended.
  EXPECT_EQ(read_to_end(process.stdout_fd(), 20s), "done\n");
  const pid_t init = process.pid();
  ASSERT_TRUE(jail_test::wait_until([&] { return jail_test::process_ended(init); }, 10s));
  // Not a readiness wait: the host waits only after the timeout would have fired.
  std::this_thread::sleep_until(start + timeout + 500ms);
  const jail::Result result = process.wait();
  EXPECT_EQ(result.outcome, jail::Outcome::exited) << jail::to_json(result);
  EXPECT_EQ(result.exit_code, 0) << jail::to_json(result);
  EXPECT_LT(result.wall_ms, static_cast<double>(timeout.count())) << jail::to_json(result);
}

TEST(LibrarySupervision, AssigningOverARunningProcessEndsTheJailItHeld) {
  jail::Process process = jail::launch(shell("exec sleep 100"));
  const pid_t first = process.pid();
  process = jail::launch(shell("exit 3"));
  EXPECT_TRUE(process_gone(first)) << "the first jail's init " << first << " is still there";
  EXPECT_EQ(process.wait().exit_code, 3);

  std::vector<jail::Process> kept;
  kept.push_back(jail::launch(shell("exec sleep 100")));
  kept.push_back(jail::launch(shell("exec sleep 100")));
  const pid_t erased = kept.front().pid();
  kept.erase(kept.begin());
  EXPECT_TRUE(process_gone(erased)) << "the erased jail's init " << erased << " is still there";
}

TEST(LibrarySupervision, AHostThatReapsEveryChildStillGetsTheResult) {
  std::atomic<bool> reaping = true;
  std::atomic<int> sweeps = 0;
  std::thread reaper([&] {
    while (reaping) {
      int status = 0;
      (void)::waitpid(-1, &status, WNOHANG);
      ++sweeps;
      std::this_thread::sleep_for(1ms);
    }
  });
  jail::Process process = jail::launch(shell("echo ready; exec sleep 5"));
  const pid_t init = process.pid();
  EXPECT_TRUE(read_until(process.stdout_fd(), "ready\n", 10s)) << "the tool never started";
  process.kill(SIGKILL);
  // The jail has ended, and the host's reaper has swept since: whatever it could take, it took.
  EXPECT_TRUE(jail_test::wait_until([&] { return jail_test::process_ended(init); }, 10s));
  const int swept = sweeps;
  EXPECT_TRUE(jail_test::wait_until([&] { return sweeps >= swept + 2; }, 10s));
  const jail::Result result = process.wait();
  reaping = false;
  reaper.join();
  EXPECT_EQ(result.outcome, jail::Outcome::signaled) << jail::to_json(result);
  EXPECT_EQ(result.signal, SIGKILL) << jail::to_json(result);
}

TEST(LibrarySupervision, AHostWithoutAReaderOnItsStdoutIsNotKilledBySigpipe) {
  // In a child of the test's own, whose stdout is a pipe with no reader and SIGPIPE as by
  // default: the relay's writes fail with EPIPE, and the host lives to report. The SIGPIPE is
  // the tool's, as it would be writing to that pipe itself: the relay closes its pipe.
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t host = ::fork();
  ASSERT_GE(host, 0);
  if (host == 0) {
    ::signal(SIGPIPE, SIG_DFL);
    ::dup2(pipe_fds[1], STDOUT_FILENO);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    jail::Spec spec = shell("echo one; sleep 0.3; echo two");
    spec.stdio = jail::Stdio::inherit;
    spec.max_output_bytes = 1 << 20;
    const jail::Result result = jail::run(spec);
    ::_exit(result.outcome == jail::Outcome::signaled && result.signal == SIGPIPE ? 0 : 1);
  }
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  int status = 0;
  ASSERT_EQ(::waitpid(host, &status, 0), host);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the host ended with wait status " << status
      << " (exit 1: the tool did not end by SIGPIPE; 141 would be the host's own SIGPIPE)";
}

TEST(LibrarySupervision, KillDeliversSignalsBeyondTheForwardedSetAndRefusesSigstop) {
  jail::Process process = jail::launch(
      shell("trap 'echo got-abrt; exit 7' ABRT; echo ready; while :; do sleep 0.05; done"));
  char buffer[16];
  ASSERT_EQ(::read(process.stdout_fd(), buffer, 6), 6);  // "ready\n"
  process.kill(SIGABRT);
  std::optional<jail::Result> result = process.wait_for(10s);
  ASSERT_TRUE(result) << "SIGABRT never reached the tool";
  EXPECT_EQ(result->exit_code, 7) << jail::to_json(*result);
  EXPECT_EQ(read_to_end(process.stdout_fd(), 5s), "got-abrt\n");

  jail::Process other = jail::launch(shell("exec sleep 100"));
  EXPECT_THROW(other.kill(SIGSTOP), jail::Error);
  try {
    other.kill(0);
    ADD_FAILURE() << "kill(0) was accepted";
  } catch (const jail::Error& error) {
    EXPECT_NE(std::string(error.what()).find("from 1 to 64"), std::string::npos) << error.what();
  }
}

// The pid of the busy shell: the only process with the marker in its command line, apart from
// the init, named jail-init; 0 when there is none.
pid_t tool_with(const std::string& marker) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string pid = entry.path().filename();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream cmdline(entry.path() / "cmdline");
    std::stringstream text;
    text << cmdline.rdbuf();
    if (text.str().find(marker) != std::string::npos) return static_cast<pid_t>(std::stoi(pid));
  }
  return 0;
}

double tool_cpu_seconds(const std::string& marker) {
  const pid_t pid = tool_with(marker);
  return pid > 0 ? jail_test::cpu_seconds(pid) : 0;
}

// The tool ignores SIGXCPU and runs on to the hard limit (3 s): the kernel counts RLIMIT_CPU in
// ticks, which under load (ctest -j4) ran ahead of the precise times in /proc, and the soft
// limit ended the tool before the test saw it at 1.7 s.
TEST(LibrarySupervision, TheHostsOwnKillIsNotTakenForTheCpuLimit) {
  const std::string marker = "busy" + std::to_string(::getpid());
  jail::Spec spec = shell("trap '' XCPU; while :; do :; done # " + marker);
  spec.limits.cpu_time = 2s;
  jail::Process process = jail::launch(spec);
  const auto deadline = Clock::now() + 20s;
  while (tool_cpu_seconds(marker) < 1.7 && Clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_GE(tool_cpu_seconds(marker), 1.7) << "the tool never used 1.7 s of CPU";
  process.kill(SIGKILL);
  const jail::Result result = process.wait();
  EXPECT_EQ(result.outcome, jail::Outcome::signaled) << jail::to_json(result);
  EXPECT_EQ(result.signal, SIGKILL) << jail::to_json(result);
  EXPECT_FALSE(result.limit_hit) << jail::to_json(result);
}

TEST(LibrarySupervision, ThreadsWaitingAtOnceAllGetTheSameResult) {
  jail::Process process = jail::launch(shell("sleep 0.3; exit 4"));
  std::atomic<int> results = 0;
  const auto waiter = [&] {
    if (process.wait().exit_code == 4) ++results;
  };
  std::vector<std::thread> waiters;
  for (int i = 0; i < 4; ++i) waiters.emplace_back(waiter);
  EXPECT_TRUE(process.running());
  for (std::thread& thread : waiters) thread.join();
  EXPECT_EQ(results, 4);
  EXPECT_FALSE(process.running());
  EXPECT_EQ(process.wait().exit_code, 4) << "a later wait gets it too";
}

TEST(LibrarySupervision, AMovedFromProcessSaysSoInsteadOfCrashing) {
  jail::Process process = jail::launch(shell("exit 0"));
  jail::Process moved = std::move(process);
  for (const auto& use : std::vector<std::function<void()>>{
           [&] { (void)process.pid(); }, [&] { (void)process.wait(); },
           [&] { process.kill(SIGTERM); }, [&] { (void)process.stdout_fd(); }}) {
    try {
      use();
      ADD_FAILURE() << "a moved-from Process was used without an error";
    } catch (const jail::Error& error) {
      EXPECT_NE(std::string(error.what()).find("moved from"), std::string::npos) << error.what();
    }
  }
  EXPECT_EQ(moved.wait().exit_code, 0);
}

// A host at its limit of threads: the jail is cloned, but its supervisor thread cannot start.
// The jail must not be left running unsupervised or unreaped, and the caller must learn why.
TEST(LibrarySupervision, ASupervisorThatCannotStartEndsTheJailAndSaysWhy) {
  int report[2];
  ASSERT_EQ(::pipe(report), 0);
  const pid_t host = ::fork();
  ASSERT_GE(host, 0);
  if (host == 0) {
    ::close(report[0]);
    // Two tasks for this uid: this process and the jail's init. The supervisor thread would be
    // the third. RLIMIT_NPROC counts every task of the real uid, so the uid is one no other test
    // (nor anything on the host) runs as: the unprivileged tests' 65534 would make it racy.
    constexpr uid_t kOwnUid = 64999;
    const rlimit two{2, 2};
    if (::setgroups(0, nullptr) != 0 || ::setresgid(kOwnUid, kOwnUid, kOwnUid) != 0 ||
        ::setresuid(kOwnUid, kOwnUid, kOwnUid) != 0 || ::setrlimit(RLIMIT_NPROC, &two) != 0 ||
        // As after an exec: a uid change without one leaves the process undumpable, and its
        // jail's /proc files (the id maps jail writes) root's.
        ::prctl(PR_SET_DUMPABLE, 1) != 0) {
      ::_exit(120);
    }
    const jail::Result result = jail::run(shell("exit 0"));
    int status = 0;
    // ECHILD: the jail's init was reaped before the error reached the caller.
    const bool reaped = ::waitpid(-1, &status, WNOHANG | __WALL) < 0 && errno == ECHILD;
    const std::string text = jail::to_json(result) + (reaped ? "\nreaped" : "\nNOT REAPED");
    (void)!::write(report[1], text.data(), text.size());
    ::_exit(0);
  }
  ::close(report[1]);
  const std::string text = read_to_end(report[0], 60s);
  ::close(report[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(host, &status, 0), host);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status << "\n" << text;
  EXPECT_NE(text.find("\"outcome\":\"setup_error\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"step\":\"supervisor\""), std::string::npos) << text;
  EXPECT_NE(text.find("RLIMIT_NPROC"), std::string::npos) << text;
  EXPECT_TRUE(text.ends_with("\nreaped")) << text;
}

}  // namespace
