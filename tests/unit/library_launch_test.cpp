// The library as a plugin host uses it: many jails at once from several threads, each talked to
// over Stdio::pipe; wait_for before and after the tool ends; kill; a Process dropped unwaited.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "../support/time_scale.hpp"
#include "../support/wait_until.hpp"
#include "jail/error.hpp"
#include "jail/launch.hpp"
#include "library_support.hpp"
#include "temp_dir.hpp"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

using jail_test::scaled;
using jail_test::shell;

bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// Reads `fd` to end of file. While nothing arrives, the supervisor gets its turn (wait_for), so
// a tool that needs it (a denied syscall waiting for its answer) cannot stall the read. A Result
// that comes that way is kept in `result`.
std::string read_all(jail::Process& process, int fd, std::optional<jail::Result>& result,
                     std::chrono::milliseconds timeout) {
  std::string text;
  const auto deadline = Clock::now() + timeout;
  char buf[4096];
  while (Clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, 20);
    if (ready == 0) {
      if (!result) result = process.wait_for(1ms);
      continue;
    }
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  return text;
}

// Reads `fd` until `text` has come (true), or gives up after `limit` (scaled).
bool read_until(int fd, const std::string& text, std::chrono::milliseconds limit) {
  std::string seen;
  const auto deadline = Clock::now() + scaled(limit);
  char buf[256];
  while (seen.find(text) == std::string::npos && Clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    seen.append(buf, static_cast<std::size_t>(n));
  }
  return seen.find(text) != std::string::npos;
}

// Every pid whose command line contains `needle`, by scanning /proc.
std::vector<pid_t> processes_with(const std::string& needle) {
  std::vector<pid_t> found;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return found;
  while (const dirent* entry = ::readdir(proc)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(entry->d_name));
    if (pid <= 0 || pid == ::getpid()) continue;
    std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
    std::stringstream cmdline;
    cmdline << in.rdbuf();
    std::string text = cmdline.str();
    for (char& c : text) {
      if (c == '\0') c = ' ';
    }
    if (text.find(needle) != std::string::npos) found.push_back(pid);
  }
  ::closedir(proc);
  return found;
}

// The cgroups this process's jails made (named jail-<our pid>-…) that are still there, in any
// hierarchy.
std::vector<std::string> our_cgroups_left() {
  std::vector<std::string> left;
  const std::string prefix = "jail-" + std::to_string(::getpid()) + "-";
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator("/sys/fs/cgroup", ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it.depth() > 3) it.disable_recursion_pending();
    if (it->is_directory(ec) && it->path().filename().string().starts_with(prefix)) {
      left.push_back(it->path().string());
    }
  }
  return left;
}

bool process_gone(pid_t pid) {
  return ::kill(pid, 0) != 0 && errno == ESRCH;
}

TEST(LibraryLaunch, FiftyConcurrentLaunchesFromTenThreads) {
  ::signal(SIGPIPE, SIG_IGN);
  constexpr int kThreads = 10;
  constexpr int kPerThread = 5;
  std::mutex failures_lock;
  std::vector<std::string> failures;
  std::atomic<int> correct{0};
  auto fail = [&](int n, const std::string& what) {
    std::lock_guard lock(failures_lock);
    failures.push_back("tool " + std::to_string(n) + ": " + what);
  };

  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Each thread holds its five jails at once, then talks to them in turn.
      std::vector<std::pair<int, jail::Process>> running;
      for (int i = 0; i < kPerThread; ++i) {
        const int n = t * kPerThread + i + 1;
        try {
          running.emplace_back(
              n, jail::launch(shell("read x; echo \"$x-" + std::to_string(n) + "\"; echo \"err-" +
                                    std::to_string(n) + "\" >&2; exit " + std::to_string(n))));
        } catch (const jail::Error& e) {
          fail(n, std::string("launch threw: ") + e.what());
        }
      }
      for (auto& [n, process] : running) {
        const std::string line = "line-from-thread-" + std::to_string(t);
        if (process.stdin_fd() < 0 || process.stdout_fd() < 0 || process.stderr_fd() < 0) {
          fail(n, "no pipe");
          continue;
        }
        if (!write_all(process.stdin_fd(), line + "\n")) fail(n, "write to stdin failed");
        process.close_stdin();
        std::optional<jail::Result> result;
        const std::string out = read_all(process, process.stdout_fd(), result, 30s);
        const std::string err = read_all(process, process.stderr_fd(), result, 30s);
        if (!result) result = process.wait();
        const std::string want = line + "-" + std::to_string(n) + "\n";
        const bool out_ok = out == want;
        const bool err_ok = err == "err-" + std::to_string(n) + "\n";
        const bool result_ok = result->outcome == jail::Outcome::exited && result->exit_code == n;
        if (!out_ok) fail(n, "stdout '" + out + "', want '" + want + "'");
        if (!err_ok) fail(n, "stderr '" + err + "'");
        if (!result_ok) fail(n, "result " + jail::to_json(*result));
        if (out_ok && err_ok && result_ok) ++correct;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (const auto& failure : failures) ADD_FAILURE() << failure;
  EXPECT_EQ(correct.load(), kThreads * kPerThread);
  for (const auto& dir : our_cgroups_left()) ADD_FAILURE() << "cgroup left behind: " << dir;
}

TEST(LibraryLaunch, WaitForGivesNothingBeforeTheToolEndsAndTheResultAfter) {
  jail::Process process = jail::launch(shell("read x; exit 7"));
  const auto start = Clock::now();
  std::optional<jail::Result> early = process.wait_for(300ms);
  const auto waited = Clock::now() - start;
  EXPECT_FALSE(early) << "a Result while the tool still waits for input: " << jail::to_json(*early);
  EXPECT_GE(waited, 290ms);
  EXPECT_LT(waited, scaled(5s));
  // Again: a nullopt leaves the Process usable.
  EXPECT_FALSE(process.wait_for(50ms));

  ASSERT_TRUE(write_all(process.stdin_fd(), "go\n"));
  std::optional<jail::Result> late;
  for (int i = 0; i < 100 && !late; ++i) late = process.wait_for(100ms);
  ASSERT_TRUE(late) << "no Result 10 s after the tool was told to end";
  EXPECT_EQ(late->outcome, jail::Outcome::exited) << jail::to_json(*late);
  EXPECT_EQ(late->exit_code, 7) << jail::to_json(*late);
  // Finished: every later wait returns the same Result at once.
  const std::optional<jail::Result> again = process.wait_for(0ms);
  ASSERT_TRUE(again);
  EXPECT_EQ(jail::to_json(*again), jail::to_json(*late));
  EXPECT_EQ(jail::to_json(process.wait()), jail::to_json(*late));
}

TEST(LibraryLaunch, KillSigtermEndsASleepingTool) {
  jail::Process process = jail::launch(shell("exec sleep 600"));
  EXPECT_FALSE(process.wait_for(300ms));
  process.kill(SIGTERM);
  std::optional<jail::Result> result = process.wait_for(10s);
  ASSERT_TRUE(result) << "SIGTERM did not end the tool within 10 s";
  EXPECT_EQ(result->outcome, jail::Outcome::signaled) << jail::to_json(*result);
  EXPECT_EQ(result->signal, SIGTERM) << jail::to_json(*result);
  EXPECT_LT(result->wall_ms, scaled(10'000.0)) << jail::to_json(*result);
}

TEST(LibraryLaunch, ProcessDroppedWithoutWaitLeavesNothingBehind) {
  // A sleep length no other process on the machine has, to find the tool by its command line.
  const std::string marker = "7" + std::to_string(::getpid()) + ".25";
  pid_t init = 0;
  {
    jail::Process process = jail::launch(shell("sleep " + marker + "; :"));
    init = process.pid();
    // The tool is up: its sleep shows in the host's /proc.
    const auto deadline = Clock::now() + 10s;
    while (processes_with("sleep " + marker).empty() && Clock::now() < deadline) {
      std::this_thread::sleep_for(10ms);
    }
    ASSERT_FALSE(processes_with("sleep " + marker).empty()) << "the tool never started";
    ASSERT_GT(init, 0);
  }
  EXPECT_TRUE(process_gone(init)) << "the jail's init " << init << " outlived its Process";
  // The tool goes with the init's pid namespace; give the kernel a moment to finish it.
  const auto deadline = Clock::now() + scaled(5s);
  while (!processes_with("sleep " + marker).empty() && Clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  for (const pid_t pid : processes_with("sleep " + marker)) {
    ADD_FAILURE() << "process " << pid << " (the tool) outlived its Process";
    ::kill(pid, SIGKILL);
  }
  for (const auto& dir : our_cgroups_left()) ADD_FAILURE() << "cgroup left behind: " << dir;
}

// Whether this process has a child, running or a zombie: waitid finds none only when there is
// none at all (ECHILD).
bool has_children() {
  siginfo_t info{};
  return ::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT | __WALL) == 0;
}

// --runtime runsc starts runsc before it compiles the policy (runsc waits at a gate for its
// bundle meanwhile). A host process lives on after a failed launch, so the launch itself must end
// and reap that runsc: parent-death signals would not.
TEST(LibraryLaunch, RunscLaunchThatFailsAfterStartingRunscLeavesNothing) {
  if (::geteuid() != 0 || !std::filesystem::exists("/usr/bin/runsc")) {
    GTEST_FAIL() << "needs root and runsc (scripts/install-deps.sh installs it); CI has both";
  }
  const jail::TempDir work("jail-test-unit");  // removed however the test ends
  const std::filesystem::path broken = work.path() / "broken.policy";
  std::ofstream(broken) << "this is not a policy\n";
  jail::Spec spec = shell("true");
  spec.runtime = jail::Runtime::runsc;
  spec.policy = broken.string();
  ASSERT_FALSE(has_children());
  try {
    (void)jail::launch(spec);
    ADD_FAILURE() << "a policy that does not parse was accepted";
  } catch (const jail::Error& error) {
    EXPECT_EQ(error.step(), "policy") << error.what();
  }
  // A runsc left at its gate would die with this process (its keeper's lifeline), not before.
  EXPECT_FALSE(has_children()) << "runsc outlived the failed launch";
  // This process's runs only (jail-runsc-<pid>-…): other tests' runsc may wait at their gates.
  const std::string our_runs = "/jail-runsc-" + std::to_string(::getpid()) + "-";
  EXPECT_TRUE(processes_with(our_runs).empty()) << "a runsc waits at its gate";
  for (const auto& dir : our_cgroups_left()) ADD_FAILURE() << "cgroup left behind: " << dir;
}

// A parent-death signal is sent when the thread that cloned the child ends, which is why runsc's
// keeper does not use one (runsc/keeper.hpp). A host that launches from a pool thread and waits
// elsewhere must get the run's own end, not a runsc killed when that thread returned.
TEST(LibraryLaunch, ARunscJailOutlivesTheThreadThatLaunchedIt) {
  if (::geteuid() != 0 || !std::filesystem::exists("/usr/bin/runsc")) {
    GTEST_FAIL() << "needs root and runsc (scripts/install-deps.sh installs it); CI has both";
  }
  jail::Spec spec = shell("sleep 1; echo finished");
  spec.runtime = jail::Runtime::runsc;
  std::optional<jail::Process> process;
  std::atomic<pid_t> launcher_tid = 0;
  std::thread launcher([&] {
    launcher_tid = ::gettid();
    process.emplace(jail::launch(spec));
  });
  launcher.join();
  ASSERT_TRUE(process.has_value());
  // join() returns before the kernel has finished the thread (and sent any parent-death signal):
  // wait until it has left this process's task list.
  const std::string task = "/proc/self/task/" + std::to_string(launcher_tid.load());
  ASSERT_TRUE(jail_test::wait_until([&] { return !std::filesystem::exists(task); }, 10s))
      << "the launching thread is still there";
  const jail::Result result = process->wait();
  EXPECT_EQ(result.outcome, jail::Outcome::exited) << jail::to_json(result);
  EXPECT_EQ(result.exit_code, 0) << jail::to_json(result);
  // The run has ended: every writer of the pipe is gone, and its few bytes are in it.
  std::string out;
  char buffer[256];
  for (ssize_t n; (n = ::read(process->stdout_fd(), buffer, sizeof buffer)) > 0;)
    out.append(buffer, static_cast<std::size_t>(n));
  EXPECT_EQ(out, "finished\n") << jail::to_json(result);
}

// runsc run's sandbox and gofer outlive it by a moment and are orphaned. A host that is a child
// subreaper (PID 1 in its container, tini -s, systemd --user) received them: two zombies per
// run, of processes it never started. Each run's keeper takes them in instead; a run ended by
// kill() too.
TEST(LibraryLaunch, AHostThatIsASubreaperInheritsNothingOfARunscRun) {
  if (::geteuid() != 0 || !std::filesystem::exists("/usr/bin/runsc")) {
    GTEST_FAIL() << "needs root and runsc (scripts/install-deps.sh installs it); CI has both";
  }
  ASSERT_FALSE(has_children());
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
  jail::Spec spec = shell("echo ran");
  spec.runtime = jail::Runtime::runsc;
  const jail::Result ended = jail::run(spec);
  jail::Process killed = jail::launch(shell("sleep 30"));
  {
    jail::Spec sleeper = shell("echo up; sleep 30");
    sleeper.runtime = jail::Runtime::runsc;
    jail::Process process = jail::launch(sleeper);
    // The tool runs, so the sandbox and gofer are up.
    EXPECT_TRUE(read_until(process.stdout_fd(), "up\n", 20s)) << "the runsc tool never started";
    process.kill(SIGKILL);
    const jail::Result result = process.wait();
    EXPECT_EQ(result.outcome, jail::Outcome::signaled) << jail::to_json(result);
  }
  killed.kill(SIGKILL);
  (void)killed.wait();
  // Orphans that were going to come would have come by now: each run's cgroup, which they ran
  // in, was removed empty. A window in which nothing may happen, not a wait for readiness.
  std::this_thread::sleep_for(200ms);
  const bool orphaned = has_children();
  ::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
  while (::waitpid(-1, nullptr, WNOHANG | __WALL) > 0) {  // this test's, whatever happened
  }
  EXPECT_EQ(ended.outcome, jail::Outcome::exited) << jail::to_json(ended);
  EXPECT_FALSE(orphaned) << "a process of a runsc run was reparented to the host";
}

// A signal sent before the container exists goes to the keeper, which passes it on to runsc run.
// Left at their default there, SIGSEGV or SIGBUS ended the keeper itself (with a core dump of
// the host's memory) and handed runsc's processes to the host.
TEST(LibraryLaunch, AFaultSignalSentEarlyIsPassedOnNotTakenByTheKeeper) {
  if (::geteuid() != 0 || !std::filesystem::exists("/usr/bin/runsc")) {
    GTEST_FAIL() << "needs root and runsc (scripts/install-deps.sh installs it); CI has both";
  }
  ASSERT_FALSE(has_children());
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
  for (const int signal : {SIGSEGV, SIGBUS}) {
    jail::Spec spec = shell("sleep 30");
    spec.runtime = jail::Runtime::runsc;
    jail::Process process = jail::launch(spec);
    process.kill(signal);  // runsc has not made the container yet
    const std::optional<jail::Result> result = process.wait_for(20s);
    EXPECT_TRUE(result.has_value()) << "signal " << signal << " was lost; the tool ran on";
    if (!result) process.kill(SIGKILL);
  }
  // A window in which no orphan may come (as above), not a wait for readiness.
  std::this_thread::sleep_for(200ms);
  const bool orphaned = has_children();
  ::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
  while (::waitpid(-1, nullptr, WNOHANG | __WALL) > 0) {
  }
  EXPECT_FALSE(orphaned) << "the keeper died of the signal and runsc's processes came here";
}

// 32 and 33 are the C library's own (thread cancellation, set*id broadcast): never the tool's.
TEST(LibraryLaunch, TheCLibrarysInternalSignalsAreRefused) {
  jail::Process process = jail::launch(shell("sleep 30"));
  for (const int signal : {32, 33}) {
    try {
      process.kill(signal);
      ADD_FAILURE() << "kill(" << signal << ") was accepted";
    } catch (const jail::Error& error) {
      EXPECT_NE(std::string(error.what()).find("keeps signals 32 to"), std::string::npos)
          << error.what();
    }
  }
  process.kill(SIGKILL);
  (void)process.wait();
}

// The keeper that stands between jail and runsc is a copy of the host process, with every fd the
// host had. Had it kept them, the host closing a native jail's stdin would not reach that tool
// (cat would never see end-of-file) while a runsc run started later was still going.
TEST(LibraryLaunch, ARunscRunHoldsNoneOfTheHostsOtherPipes) {
  if (::geteuid() != 0 || !std::filesystem::exists("/usr/bin/runsc")) {
    GTEST_FAIL() << "needs root and runsc (scripts/install-deps.sh installs it); CI has both";
  }
  jail::Process cat = jail::launch(shell("cat"));
  jail::Spec sleeper = shell("sleep 5");
  sleeper.runtime = jail::Runtime::runsc;
  jail::Process runsc = jail::launch(sleeper);
  cat.close_stdin();
  const std::optional<jail::Result> result = cat.wait_for(scaled(3s));
  ASSERT_TRUE(result.has_value()) << "cat did not see the end of its stdin";
  EXPECT_EQ(result->outcome, jail::Outcome::exited) << jail::to_json(*result);
  runsc.kill(SIGKILL);
  (void)runsc.wait();
}

// Learning reads every syscall from the supervisor; under runsc none reach it, so a library
// caller that asks for both is told so before anything runs, as `jail policy learn` is.
TEST(LibraryLaunch, LearningUnderRunscIsRefused) {
  jail::Spec spec = shell("true");
  spec.runtime = jail::Runtime::runsc;
  spec.seccomp_mode = jail::SeccompMode::learn;
  const jail::Result result = jail::run(spec);
  EXPECT_EQ(result.outcome, jail::Outcome::setup_error) << jail::to_json(result);
  ASSERT_TRUE(result.error.has_value());
  EXPECT_NE(result.error->message.find("learning a policy"), std::string::npos)
      << result.error->message;
}

}  // namespace
