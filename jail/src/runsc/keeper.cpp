#include "runsc/keeper.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>

#include "child/caller_memory.hpp"
#include "child/fail.hpp"
#include "child/filesystem.hpp"
#include "child/raw_syscall.hpp"
#include "child/syscalls.hpp"
#include "child/vfork_clone.hpp"
#include "step.hpp"

namespace jail {
namespace {

using child::fail;

// The fd runsc's debug log goes to in runsc's process (its --debug-log names /proc/self/fd/3).
constexpr int kDebugLogFd = 3;
// Where the report socket waits out the exec in runsc's process (close-on-exec: runsc never has
// it), above the debug log so that neither dup2 lands on the other.
constexpr int kReportFd = kDebugLogFd + 1;
// How long the keeper waits for runsc's orphans once runsc run has ended; they were sent SIGKILL
// as it exited and end within a few ms.
constexpr long kOrphanPatienceMs = 5000;
// runsc's process's stack until its exec (vfork_clone): exec_runsc's frames, a path buffer among
// them, and the C library calls it makes, with room to spare.
constexpr std::size_t kRunscStackBytes = 64 * 1024;

// runsc run's pid in the keeper while it may be signalled; 0 before it exists and once reaped,
// so that a signal never reaches a pid the kernel may have given to another process.
volatile sig_atomic_t runsc_pid = 0;
// keeper_stop_signal(), learnt before the keeper lets go of the caller's memory: SIGRTMAX is a
// C library call, which pass_on must not make from there on.
volatile sig_atomic_t stop_signal = 0;

// The keeper's own faults: their handler must not return to the faulting instruction.
bool is_fault(int signal) {
  switch (signal) {
    case SIGSEGV:
    case SIGBUS:
    case SIGILL:
    case SIGFPE:
    case SIGTRAP:
    case SIGSYS:
      return true;
    default:
      return false;
  }
}

// The kernel's struct sigaction, for rt_sigaction made raw (the C library's differs in its mask).
struct KernelSigaction {
  void (*handler)(int) = SIG_DFL;
  unsigned long flags = 0;
  void (*restorer)() = nullptr;
  std::uint64_t mask = 0;
};

// The keeper's end and its handler run after it let go of the caller's memory
// (child/caller_memory.hpp): raw system calls only, from here to the end of the namespace.
void set_default_disposition(int signal) {
  const KernelSigaction action;
  child::raw::call(SYS_rt_sigaction, signal, &action, nullptr, sizeof action.mask);
}

void pass_on(int signal, siginfo_t* info, void* /*context*/) {
  if (is_fault(signal) && info->si_code > 0) {
    // Raised by the kernel for the keeper's own instruction: end as that fault does.
    set_default_disposition(signal);
    return;
  }
  const pid_t pid = runsc_pid;
  if (pid > 0) {
    // Only jail, the keeper's parent, asks for runsc's end; the same signal number from anyone
    // else, or without the marker, is passed on like any other.
    const bool stop = signal == stop_signal && info->si_code == SI_QUEUE &&
                      info->si_value.sival_int == kKeeperStopMarker &&
                      info->si_pid == child::raw::call(SYS_getppid);
    child::raw::call(SYS_kill, pid, stop ? SIGKILL : signal);
  }
}

// SIGCHLD's handler in the keeper: it does nothing but end the keeper's ppoll (wait_for_runsc);
// at SIG_DFL the signal would be discarded and the ppoll go on when runsc ends.
void child_ended(int /*signal*/) {}

// Every catchable signal's disposition set: `keeper` true for the keeper (pass_on, SIGCHLD
// child_ended), false for runsc's child (all default, as an exec leaves them). Either way the
// caller's handlers, which the clone copied, never run in these processes. SIGCHLD handled, not
// left as the caller had it: a caller's SIG_IGN or SA_NOCLDWAIT would have the kernel reap runsc
// before the keeper learns how it ended.
void set_dispositions(bool keeper) {
  struct sigaction action {};
  sigemptyset(&action.sa_mask);
  for (int signal = 1; signal <= SIGRTMAX; ++signal) {
    if (signal == SIGKILL || signal == SIGSTOP) continue;
    if (keeper && signal == SIGCHLD) {
      action.sa_flags = 0;
      action.sa_handler = child_ended;
    } else if (keeper) {
      action.sa_flags = SA_SIGINFO;
      action.sa_sigaction = pass_on;
    } else {
      action.sa_flags = 0;
      action.sa_handler = SIG_DFL;
    }
    (void)::sigaction(signal, &action, nullptr);  // glibc's own two refuse (see set_signal_mask)
  }
}

constexpr std::uint64_t kSigchld = std::uint64_t{1} << (SIGCHLD - 1);
constexpr std::uint64_t kLibcInternal =
    (std::uint64_t{1} << (32 - 1)) | (std::uint64_t{1} << (33 - 1));

// Unblocked, the C library's two internal signals (32 and 33, below SIGRTMIN) stay blocked in
// the keeper: their handlers cannot be replaced, and a stray one would end the keeper (32) or be
// swallowed (33). glibc's sigset functions never touch them, so the kernel's mask is set raw.
// SIGCHLD stays blocked too but while the keeper sleeps in ppoll, so that runsc's end between a
// waitid and the ppoll after it is not missed (wait_for_runsc).
void set_signal_mask(bool blocked) {
  const std::uint64_t mask = blocked ? ~std::uint64_t{0} : kLibcInternal | kSigchld;
  child::raw::call(SYS_rt_sigprocmask, SIG_SETMASK, &mask, nullptr, sizeof mask);
}

long now_ms() {
  timespec now{};
  child::raw::call(SYS_clock_gettime, CLOCK_MONOTONIC, &now);
  return now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

// Waits for runsc run to end, reaping every orphan that ends first; its wait status. `lifeline`
// (keeper.hpp) ends when jail's process does: runsc run is then killed, and still waited for;
// -1 when there is none (runsc was killed already).
int wait_for_runsc(pid_t runsc, int lifeline) {
  bool jail_alive = lifeline >= 0;
  for (;;) {
    siginfo_t info{};
    // Learnt without reaping: runsc_pid must be cleared before runsc's pid is free again.
    const long waited =
        child::raw::call(SYS_waitid, P_ALL, 0, &info,
                         WEXITED | __WALL | WNOWAIT | (jail_alive ? WNOHANG : 0), nullptr);
    if (waited == -EINTR) continue;
    if (waited < 0) return W_EXITCODE(125, 0);  // cannot happen while runsc is our child
    if (info.si_pid == 0) {                     // nothing has ended yet
      pollfd jail{lifeline, POLLIN, 0};
      const std::uint64_t sleeping_mask = kLibcInternal;
      const long ready =
          child::raw::call(SYS_ppoll, &jail, 1, nullptr, &sleeping_mask, sizeof sleeping_mask);
      if (ready > 0) {
        // EOF (or an error): jail is gone, and nobody will read what runsc says or ends.
        jail_alive = false;
        if (const pid_t pid = runsc_pid; pid > 0) child::raw::call(SYS_kill, pid, SIGKILL);
      }
      continue;
    }
    if (info.si_pid == runsc) {
      set_signal_mask(true);
      runsc_pid = 0;
    }
    int status = 0;
    while (child::raw::call(SYS_wait4, info.si_pid, &status, __WALL, nullptr) == -EINTR) {
    }
    if (info.si_pid == runsc) return status;
  }
}

void reap_orphans() {
  const long give_up = now_ms() + kOrphanPatienceMs;
  for (;;) {
    const long reaped = child::raw::call(SYS_wait4, -1, nullptr, WNOHANG | __WALL, nullptr);
    if (reaped > 0) continue;
    if (reaped < 0 && reaped != -EINTR) return;  // ECHILD: none left
    if (now_ms() >= give_up) return;
    const timespec a_moment{0, 1000000};
    child::raw::call(SYS_nanosleep, &a_moment, nullptr);
  }
}

[[noreturn]] void end_as(int status) {
  if (WIFEXITED(status)) child::raw::exit_group(WEXITSTATUS(status));
  const int signal = WTERMSIG(status);
  set_default_disposition(signal);
  const std::uint64_t only = std::uint64_t{1} << (signal - 1);
  child::raw::call(SYS_rt_sigprocmask, SIG_UNBLOCK, &only, nullptr, sizeof only);
  child::raw::call(SYS_kill, child::raw::call(SYS_getpid), signal);
  child::raw::exit_group(128 + signal);
}

// The run's read-only binds (the root's and the caller's), made in the bundle's rootfs by
// runsc's process: part of the root runsc serves, they cost gVisor no mount of its own
// (oci/host_side_binds.hpp). In a mount namespace of runsc's own, private, so that the host's
// mount table never holds them; the gofer and the sandbox runsc starts are in it too. A bind
// that fails ends the start, as natively: the report names it (detail: its op).
void bind_into_rootfs(const child::HostBinds& binds, int report) {
  if (::unshare(CLONE_NEWNS) != 0) fail(report, Step::runsc_mount_namespace, errno);
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    fail(report, Step::runsc_mount_namespace, errno);
  const int root = ::open(binds.root_dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (root < 0) fail(report, Step::stage_root, errno);
  for (std::size_t i = 0; i < binds.op_count; ++i) {
    if (!binds.host_side[i]) continue;
    Step step{};
    if (const int err = child::bind_beneath(root, binds.ops[i], step); err != 0)
      fail(report, step, err, static_cast<int>(i));
  }
  ::close(root);
}

// runsc's process's entry when it is cloned vfork-style; `exec` is the keeper's, which sleeps
// until the exec.
void exec_runsc_from(void* exec) {
  exec_runsc(*static_cast<const RunscExec*>(exec));
}

// Starts runsc's process: vfork-style where that is there (child/vfork_clone.hpp), so that the
// keeper's copy of the caller's page tables is not copied again for a process that only execs;
// else a fork. Its pid, or -errno.
long start_runsc(clone_args runsc_clone, const RunscExec& exec) {
  if constexpr (child::kVforkCloneAvailable) {
    alignas(16) char stack[kRunscStackBytes];
    return child::vfork_clone(runsc_clone, stack, sizeof stack, exec_runsc_from,
                              const_cast<RunscExec*>(&exec));
  }
  const long pid = ::syscall(SYS_clone3, &runsc_clone, sizeof runsc_clone);
  if (pid == 0) exec_runsc(exec);
  return pid < 0 ? -errno : pid;
}

}  // namespace

void stop_keeper(int keeper_pidfd) {
  siginfo_t info{};
  info.si_signo = keeper_stop_signal();
  info.si_code = SI_QUEUE;
  info.si_pid = ::getpid();
  info.si_uid = ::getuid();
  info.si_value.sival_int = kKeeperStopMarker;
  ::syscall(SYS_pidfd_send_signal, keeper_pidfd, keeper_stop_signal(), &info, 0);
}

[[noreturn]] void exec_runsc(RunscExec exec) {
  // If the keeper dies, runsc run goes too (its sandbox is then ended by the kernel's cgroup or
  // runsc's own watchdog).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  // runsc starts with the default dispositions and no signal blocked, whatever the thread it was
  // cloned from had (the keeper is cloned with them all blocked).
  set_dispositions(false);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // A session of its own, as a native jail's init has: a terminal's Ctrl-C (SIGINT to the
  // foreground group) would otherwise end runsc run and its gofer directly, before jail could
  // forward it to the tool. Its stdio is pipes; it needs no terminal.
  const int report = exec.report_fd;
  if (::setsid() < 0) fail(report, Step::runsc_session, errno);
  // Before runsc exists, so none of it runs outside the limits; and a task moving itself waits
  // for no RCU grace period, where jail writing the pid did (~10 ms of each start, during which
  // the host's forks and execs, runsc's among them, stall). As the native init (child/init.cpp).
  for (const int fd : exec.cgroup_tasks) {
    if (const int err = child::sys::join_cgroup_v1(fd); err != 0)
      fail(report, Step::cgroup_attach, err);
  }
  if (exec.host_binds.root_dir != nullptr) bind_into_rootfs(exec.host_binds, report);
  // Both moved out of the way first: stdio's dup2, and each other's, must not land on them.
  const auto above_fixed_slots = [report](int fd) {
    if (fd < 0 || fd > kReportFd) return fd;
    const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, kReportFd + 1);
    if (moved < 0) fail(report, Step::runsc_fds, errno);
    return moved;
  };
  const int debug_log = above_fixed_slots(exec.debug_log);
  const int report_above = above_fixed_slots(report);
  for (int fd = 0; fd <= 2; ++fd) {
    if (exec.stdio[fd] >= 0 && ::dup2(exec.stdio[fd], fd) != fd)
      fail(report_above, Step::runsc_fds, errno);
  }
  if (report_above < 0) {
    ::close(kReportFd);
  } else if (::dup3(report_above, kReportFd, O_CLOEXEC) != kReportFd) {
    fail(report_above, Step::runsc_fds, errno);
  }
  if (debug_log < 0) {
    ::close(kDebugLogFd);
  } else if (::dup2(debug_log, kDebugLogFd) != kDebugLogFd) {
    fail(kReportFd, Step::runsc_fds, errno);
  }
  ::syscall(SYS_close_range, kReportFd + 1, UINT_MAX, 0);
  ::execve(exec.path, exec.argv, exec.envp);
  fail(kReportFd, Step::exec_runsc, errno);
}

[[noreturn]] void keep_runsc(clone_args runsc_clone, const RunscExec& exec, int lifeline) {
  ::prctl(PR_SET_NAME, "jail-keeper", 0, 0, 0);  // what `ps` shows for it, not a second "jail"
  const int maps_fd = child::open_own_maps();
  set_signal_mask(true);
  // It holds a copy of the caller's memory: never written out as a core dump, whatever ends it.
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  // Out of the caller's process group too: a terminal's Ctrl-C is jail's to forward.
  if (::setsid() < 0) fail(exec.report_fd, Step::keeper_session, errno);
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
    fail(exec.report_fd, Step::keeper_subreaper, errno);
  stop_signal = keeper_stop_signal();
  set_dispositions(true);
  const long pid = start_runsc(runsc_clone, exec);
  if (pid < 0) fail(exec.report_fd, Step::start_runsc, static_cast<int>(-pid));
  runsc_pid = static_cast<pid_t>(pid);
  // runsc has exec'd (cloned vfork-style, start_runsc returns once it has): jail's thread, which
  // waits for this report before its own work, now takes a CPU from nothing on the start's path
  // (wait_until_runsc_started in runsc/sandbox.cpp).
  child::send_report(exec.report_fd, child::ReportKind::running, Step::start_runsc, 0, 0);
  // runsc has its own copy; the keeper needs nothing of the caller's any more.
  child::let_go_of_caller_memory(maps_fd);
  // The keeper needs no fd but its lifeline (as fd 0); holding the caller's (another run's pipes
  // among them) would keep their readers from seeing the end of them.
  const bool has_lifeline = lifeline == 0 || child::raw::call(SYS_dup3, lifeline, 0, 0) == 0;
  // Without it the keeper could not tell when jail is gone: fail closed.
  if (!has_lifeline) child::raw::call(SYS_kill, runsc_pid, SIGKILL);
  child::raw::call(SYS_close_range, 1, UINT_MAX, 0);
  set_signal_mask(false);
  const int status = wait_for_runsc(static_cast<pid_t>(pid), has_lifeline ? 0 : -1);
  reap_orphans();
  end_as(status);
}

}  // namespace jail
