#include "runsc/keeper.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

#include "child/syscalls.hpp"

namespace jail {
namespace {

// The fd runsc's debug log goes to in runsc's process (its --debug-log names /proc/self/fd/3).
constexpr int kDebugLogFd = 3;
// How long the keeper waits for runsc's orphans once runsc run has ended; they were sent SIGKILL
// as it exited and end within a few ms.
constexpr long kOrphanPatienceMs = 5000;

// runsc run's pid in the keeper while it may be signalled; 0 before it exists and once reaped,
// so that a signal never reaches a pid the kernel may have given to another process.
volatile sig_atomic_t runsc_pid = 0;

void pass_on(int signal) {
  const pid_t pid = runsc_pid;
  if (pid <= 0) return;
  ::kill(pid, signal == keeper_stop_signal() ? SIGKILL : signal);
}

// A fault in the keeper itself must end it, not be passed on and return to the faulting
// instruction; SIGCHLD at its default, or a caller's SIG_IGN would have the kernel reap runsc
// before the keeper learns how it ended.
bool keeps_default(int signal) {
  switch (signal) {
    case SIGSEGV:
    case SIGBUS:
    case SIGILL:
    case SIGFPE:
    case SIGTRAP:
    case SIGSYS:
    case SIGCHLD:
      return true;
    default:
      return false;
  }
}

// Every disposition the caller's process had (the keeper is a copy of it) replaced: its handlers
// are the caller's code, not the keeper's.
void take_over_signals() {
  struct sigaction action {};
  sigemptyset(&action.sa_mask);
  for (int signal = 1; signal <= SIGRTMAX; ++signal) {
    if (signal == SIGKILL || signal == SIGSTOP) continue;
    action.sa_handler = keeps_default(signal) ? SIG_DFL : pass_on;
    (void)::sigaction(signal, &action, nullptr);  // glibc's own two refuse; never delivered here
  }
}

void set_signal_mask(bool blocked) {
  sigset_t set;
  if (blocked) {
    sigfillset(&set);
  } else {
    sigemptyset(&set);
  }
  ::sigprocmask(SIG_SETMASK, &set, nullptr);
}

long now_ms() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

// Waits for runsc run to end, reaping every orphan that ends first; its wait status.
int wait_for_runsc(pid_t runsc) {
  for (;;) {
    siginfo_t info{};
    // Learnt without reaping: runsc_pid must be cleared before runsc's pid is free again.
    if (::waitid(P_ALL, 0, &info, WEXITED | __WALL | WNOWAIT) < 0) {
      if (errno == EINTR) continue;
      return W_EXITCODE(125, 0);  // cannot happen while runsc is our child
    }
    if (info.si_pid == runsc) {
      set_signal_mask(true);
      runsc_pid = 0;
    }
    int status = 0;
    while (::waitpid(info.si_pid, &status, __WALL) < 0 && errno == EINTR) {
    }
    if (info.si_pid == runsc) return status;
  }
}

void reap_orphans() {
  const long give_up = now_ms() + kOrphanPatienceMs;
  for (;;) {
    const pid_t reaped = ::waitpid(-1, nullptr, WNOHANG | __WALL);
    if (reaped > 0) continue;
    if (reaped < 0 && errno != EINTR) return;  // ECHILD: none left
    if (now_ms() >= give_up) return;
    const timespec a_moment{0, 1000000};
    ::nanosleep(&a_moment, nullptr);
  }
}

[[noreturn]] void end_as(int status) {
  if (WIFEXITED(status)) ::_exit(WEXITSTATUS(status));
  const int signal = WTERMSIG(status);
  const rlimit no_core{0, 0};  // runsc's death is reported, not the keeper's core
  ::setrlimit(RLIMIT_CORE, &no_core);
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  ::sigaction(signal, &action, nullptr);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, signal);
  ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
  ::kill(::getpid(), signal);
  ::_exit(128 + signal);
}

}  // namespace

[[noreturn]] void exec_runsc(RunscExec exec) {
  // If jail dies, runsc run goes too (its sandbox is then ended by the kernel's cgroup or
  // runsc's own watchdog).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  // runsc starts with no signal blocked, whatever the thread it was cloned from blocks (the
  // lasting thread blocks them all).
  set_signal_mask(false);
  // A session of its own, as a native jail's init has: a terminal's Ctrl-C (SIGINT to the
  // foreground group) would otherwise end runsc run and its gofer directly, before jail could
  // forward it to the tool. Its stdio is pipes; it needs no terminal.
  if (::setsid() < 0) ::_exit(125);
  // Before runsc exists, so none of it runs outside the limits; and a task moving itself waits
  // for no RCU grace period, where jail writing the pid did (~10 ms of each start, during which
  // the host's forks and execs, runsc's among them, stall). As the native init (child/init.cpp).
  for (const int fd : exec.cgroup_tasks) {
    if (child::sys::join_cgroup_v1(fd) != 0) ::_exit(125);
  }
  // Moved out of the way first: stdio's dup2 must not land on it.
  int debug_log = exec.debug_log;
  if (debug_log >= 0 && debug_log <= kDebugLogFd) {
    debug_log = ::fcntl(debug_log, F_DUPFD_CLOEXEC, kDebugLogFd + 1);
    if (debug_log < 0) ::_exit(125);
  }
  for (int fd = 0; fd <= 2; ++fd) {
    if (exec.stdio[fd] >= 0 && ::dup2(exec.stdio[fd], fd) != fd) ::_exit(125);
  }
  int first_closed = 3;
  if (debug_log >= 0) {
    if (::dup2(debug_log, kDebugLogFd) != kDebugLogFd) ::_exit(125);
    first_closed = kDebugLogFd + 1;
  }
  ::syscall(SYS_close_range, first_closed, UINT_MAX, 0);
  ::execve(exec.path, exec.argv, exec.envp);
  ::_exit(127);
}

[[noreturn]] void keep_runsc(clone_args runsc_clone, const RunscExec& exec) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  set_signal_mask(true);
  // Out of the caller's process group too: a terminal's Ctrl-C is jail's to forward.
  if (::setsid() < 0) ::_exit(125);
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) ::_exit(125);
  take_over_signals();
  const long pid = ::syscall(SYS_clone3, &runsc_clone, sizeof runsc_clone);
  if (pid == 0) exec_runsc(exec);
  if (pid < 0) ::_exit(125);
  runsc_pid = static_cast<pid_t>(pid);
  // The keeper needs no fd; holding the caller's (another run's pipes among them) would keep
  // their readers from seeing the end of them.
  ::syscall(SYS_close_range, 0, UINT_MAX, 0);
  set_signal_mask(false);
  const int status = wait_for_runsc(static_cast<pid_t>(pid));
  reap_orphans();
  end_as(status);
}

}  // namespace jail
