// Child side, after clone: no allocation, no exceptions, no logging. See plan.hpp.
//
// This process is PID 1 of the jail's pid namespace. It builds the root, drops to the tool's
// identity, forks the tool, lets go of the caller's memory it was cloned with
// (child/caller_memory.hpp) and then only reaps and forwards signals. When the tool exits it
// reports the status and exits too, and the kernel kills whatever is left in the namespace —
// a daemon that double-forked to outlive the tool does not.
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>

#include "child/caller_memory.hpp"
#include "child/fail.hpp"
#include "child/filesystem.hpp"
#include "child/identity.hpp"
#include "child/keyring.hpp"
#include "child/plan.hpp"
#include "child/raw_syscall.hpp"
#include "child/syscalls.hpp"
#include "child/terminal.hpp"
#include "child/timing.hpp"
#include "child/tool.hpp"

namespace jail::child {
namespace {

// Everything the caller's process had open (other jails' pipes, a library host's sockets) is
// closed before anything else happens; only stdio, the two handshake pipes, the v1 cgroup files
// and the bind sources stay.
void close_inherited_fds(const Plan& plan) {
  for (int fd = 0; fd <= 2; ++fd) {
    if (plan.stdio_fds[fd] >= 0 && ::dup2(plan.stdio_fds[fd], fd) != fd) {
      fail(plan, Step::close_inherited_fds, errno);
    }
  }
  // A closed stdio fd would be taken by the next file the tool opens: give it /dev/null.
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) < 0 && ::open("/dev/null", O_RDWR) != fd) {
      fail(plan, Step::close_inherited_fds, EBADF);
    }
  }
  unsigned keep[4 + Plan::kMaxCgroupTasks + 2 * Plan::kMaxBindSources];
  std::size_t kept = 0;
  keep[kept++] = static_cast<unsigned>(plan.go_fd);
  keep[kept++] = static_cast<unsigned>(plan.report_fd);
  for (std::size_t i = 0; i < plan.cgroup_tasks_count; ++i) {
    keep[kept++] = static_cast<unsigned>(plan.cgroup_tasks_fds[i]);
  }
  // The bind sources the parent opened (at most kMaxBindSources, which it checked).
  for (std::size_t i = 0; i < plan.op_count; ++i) {
    const OpKind kind = plan.ops[i].kind;
    if ((kind == OpKind::bind || kind == OpKind::overlay) && plan.ops[i].source_fd >= 0) {
      keep[kept++] = static_cast<unsigned>(plan.ops[i].source_fd);
    }
    if (plan.ops[i].overlay_layer_fd >= 0) {
      keep[kept++] = static_cast<unsigned>(plan.ops[i].overlay_layer_fd);
    }
  }
  if (plan.rootfs_fd >= 0) keep[kept++] = static_cast<unsigned>(plan.rootfs_fd);
  if (plan.landlock_ruleset_fd >= 0) keep[kept++] = static_cast<unsigned>(plan.landlock_ruleset_fd);
  std::sort(keep, keep + kept);
  unsigned next = 3;
  for (std::size_t i = 0; i < kept; ++i) {
    const unsigned fd = keep[i];
    if (fd > next && ::syscall(SYS_close_range, next, fd - 1, 0) != 0) {
      fail(plan, Step::close_inherited_fds, errno);
    }
    next = std::max(next, fd + 1);
  }
  if (::syscall(SYS_close_range, next, UINT_MAX, 0) != 0)
    fail(plan, Step::close_inherited_fds, errno);
}

void wait_for_parent(const Plan& plan) {
  char go = 0;
  ssize_t n;
  do {
    n = ::read(plan.go_fd, &go, 1);
  } while (n < 0 && errno == EINTR);
  // EOF: the parent died before finishing the id maps; there is nobody to report to.
  if (n != 1) ::_exit(kSetupFailedStatus);
}

// A task writing 0 to a v1 `tasks` file moves itself, which needs no threadgroup lock and so no
// RCU grace period (the parent writing our pid to cgroup.procs waits for one: 5-15 ms here).
// The init is single-threaded, so this moves all of it; everything it forks inherits the cgroup.
void join_cgroups(const Plan& plan) {
  for (std::size_t i = 0; i < plan.cgroup_tasks_count; ++i) {
    if (const int err = sys::join_cgroup_v1(plan.cgroup_tasks_fds[i]); err != 0) {
      fail(plan, Step::cgroup_attach, err);
    }
    ::close(plan.cgroup_tasks_fds[i]);
  }
  // The cgroup namespace was made at clone, before the joins: rooted at the caller's cgroups, it
  // showed the tool the jail's (jail-<host pid>-…) in /proc/self/cgroup. One rooted here shows /.
  if (plan.cgroup_tasks_count > 0 && ::unshare(CLONE_NEWCGROUP) != 0) {
    fail(plan, Step::cgroup_attach, errno);
  }
}

// The jail's own user namespace's per-user limits (user_quotas.hpp): CAP_SYS_RESOURCE in it is
// what lets them be written, so before the drop. A limit this kernel lacks is skipped.
void set_user_quotas(const Plan& plan) {
  for (std::size_t i = 0; i < plan.quota_count; ++i) {
    const QuotaSetting& quota = plan.quotas[i];
    const int fd = ::open(quota.path, O_WRONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) continue;
    if (fd < 0) fail(plan, Step::user_quotas, errno, static_cast<int>(i));
    const ssize_t n = ::write(fd, quota.value, quota.value_len);
    const int err = errno;
    ::close(fd);
    if (n != static_cast<ssize_t>(quota.value_len)) {
      fail(plan, Step::user_quotas, n < 0 ? err : EIO, static_cast<int>(i));
    }
  }
}

void bring_loopback_up(const Plan& plan) {
  const int sock = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (sock < 0) fail(plan, Step::loopback_up, errno);
  ifreq request{};
  std::memcpy(request.ifr_name, "lo", 3);
  if (::ioctl(sock, SIOCGIFFLAGS, &request) != 0) fail(plan, Step::loopback_up, errno);
  request.ifr_flags = static_cast<short>(request.ifr_flags | IFF_UP | IFF_RUNNING);
  if (::ioctl(sock, SIOCSIFFLAGS, &request) != 0) fail(plan, Step::loopback_up, errno);
  ::close(sock);
}

// The egress proxy's door in the tool's network: a listener made here, in the namespace, and
// served from the host side (accept works across namespaces), so that nothing of jail's runs in
// the jail to forward it. The init keeps no copy: the tool cannot take the port or the listener.
void open_egress_listener(const Plan& plan) {
  const int sock = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0) fail(plan, Step::egress_listener, errno);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(kEgressProxyPort);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(sock, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(sock, SOMAXCONN) != 0) {
    fail(plan, Step::egress_listener, errno);
  }
  if (!send_fd(plan.report_fd, ReportKind::egress_listener, sock)) {
    fail(plan, Step::egress_listener, errno);
  }
  ::close(sock);
}

// Every signal: the init of a pid namespace is sent only those it blocks or handles, so a
// signal left out here would never reach the tool (Process::kill(SIGABRT), a ^Z). SIGKILL and
// SIGSTOP cannot be blocked and act on the init itself; a fault of the init's own is delivered
// whatever the mask.
sigset_t reaper_signals() {
  sigset_t set;
  sigfillset(&set);
  return set;
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 255;
}

// What the init's last loop needs, copied out of the plan: the plan is in the caller's heap,
// which the init lets go of before the loop (child/caller_memory.hpp). Raw system calls only
// from there on.
struct Reaper {
  int signal_fd = -1;
  int go_fd = -1;
  int report_fd = -1;
  bool trace_timing = false;
  pid_t tool = 0;
  // The Landlock mode: no pid namespace ends the tool's processes with the init, so the init
  // ends them (end_descendants), and jail's own signals come from its parent, not from pid 0.
  bool landlock = false;
  pid_t parent = 0;
};

// "/proc/self/task/TID/children" for this single-threaded init, into `out` (64 bytes).
void children_path(char* out, long tid) {
  constexpr char kHead[] = "/proc/self/task/";
  constexpr char kTail[] = "/children";
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + tid % 10);
    tid /= 10;
  } while (tid > 0);
  // Plain loops: after the caller's memory is let go, no C library function is called.
  char* at = out;
  for (const char* c = kHead; *c != '\0'; ++c) *at++ = *c;
  while (n > 0) *at++ = digits[--n];
  for (const char* c = kTail;; ++c) {
    *at++ = *c;
    if (*c == '\0') break;
  }
}

// Every process below the init, SIGKILLed and reaped. It is their subreaper: an orphan comes to
// it, so killing its children round after round reaches every descendant, however they forked
// or changed sessions; a child pid cannot be reused before the init has reaped it.
void end_descendants() {
  char path[64];
  children_path(path, raw::call(SYS_gettid));
  char listed[4096];
  for (;;) {
    bool any = false;
    const long fd = raw::call(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      const long n = raw::call(SYS_read, fd, listed, sizeof listed - 1);
      raw::call(SYS_close, fd);
      long pid = 0;
      for (long i = 0; i < n + 1; ++i) {
        const char c = i < n ? listed[i] : ' ';
        if (c >= '0' && c <= '9') {
          pid = pid * 10 + (c - '0');
        } else if (pid > 0) {
          raw::call(SYS_kill, pid, SIGKILL);
          any = true;
          pid = 0;
        }
      }
    }
    int status = 0;
    // Reap what died; wait for one when only the dying are left, until none is left at all.
    long done = raw::call(SYS_wait4, -1, &status, WNOHANG | __WALL, nullptr);
    if (done == 0 && !any) done = raw::call(SYS_wait4, -1, &status, __WALL, nullptr);
    if (done == -ECHILD) return;
  }
}

[[noreturn]] void reap(const Reaper reaper) {
  for (;;) {
    pollfd fds[2] = {{reaper.signal_fd, POLLIN, 0}, {reaper.go_fd, POLLIN, 0}};
    const long ready = raw::call(SYS_ppoll, fds, 2, nullptr, nullptr, 0);
    if (ready == -EINTR) continue;
    if (ready < 0) raw::exit_group(kSetupFailedStatus);
    // The go pipe's write end lives as long as the jail's parent process: EOF means it died
    // (even by SIGKILL), and leaving here takes the whole namespace with us.
    if (fds[1].revents != 0) {
      if (reaper.landlock) end_descendants();
      raw::exit_group(128 + SIGKILL);
    }
    if ((fds[0].revents & POLLIN) == 0) continue;
    signalfd_siginfo info;
    if (raw::call(SYS_read, reaper.signal_fd, &info, sizeof info) != sizeof info) continue;
    if (info.ssi_signo == SIGCHLD) {
      int status = 0;
      long done;
      while ((done = raw::call(SYS_wait4, -1, &status, WNOHANG | __WALL, nullptr)) > 0) {
        if (done == reaper.tool) {
          mark(reaper.trace_timing, reaper.report_fd, Phase::tool_exited);
          send_report(reaper.report_fd, ReportKind::tool_exited, Step::exec, 0, status);
          if (reaper.landlock) end_descendants();
          raw::exit_group(exit_code_of(status));
        }
      }
    } else if (info.ssi_pid == 0 || info.ssi_code == SI_KERNEL ||
               (reaper.landlock && static_cast<pid_t>(info.ssi_pid) == reaper.parent)) {
      // Only signals from outside the jail (sender pid 0 here) are forwarded; the tool signalling
      // its own init gets nothing.
      raw::call(SYS_kill, reaper.tool, info.ssi_signo);
    }
  }
}

}  // namespace

void run(Plan& plan) {
  // The init shares the caller's argv and environ memory; the tool could read it back through
  // /proc/1/cmdline. It becomes "jail-init" and zeros.
  if (plan.caller_args != nullptr && plan.caller_args_len > 0) {
    std::memset(plan.caller_args, 0, plan.caller_args_len);
    constexpr char kName[] = "jail-init";
    std::memcpy(plan.caller_args, kName, std::min(sizeof kName, plan.caller_args_len));
  }
  if (plan.caller_env != nullptr) std::memset(plan.caller_env, 0, plan.caller_env_len);
  close_inherited_fds(plan);
  const int maps_fd = open_own_maps();
  wait_for_parent(plan);
  // Before anything else: the jail's limits hold for all it does from here on.
  join_cgroups(plan);
  if (!plan.landlock) {
    // The namespace maps the tool's ids only: the setup runs as them, with capabilities over
    // the jail's own namespaces and none over the host's files (the parent opened the sources).
    take_tool_ids(plan);
    set_user_quotas(plan);
  }
  mark(plan, Phase::released);
  if (!plan.landlock) {
    build_root(plan);
    if (::sethostname(plan.hostname, plan.hostname_len) != 0) fail(plan, Step::hostname, errno);
  } else if (::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
    fail(plan, Step::subreaper, errno);
  }
  leave_callers_keyring(plan);
  if (plan.new_net) bring_loopback_up(plan);
  if (plan.egress_listener) open_egress_listener(plan);

  const sigset_t signals = reaper_signals();
  if (::sigprocmask(SIG_BLOCK, &signals, nullptr) != 0) fail(plan, Step::signal_setup, errno);
  const int signal_fd = ::signalfd(-1, &signals, SFD_CLOEXEC);
  if (signal_fd < 0) fail(plan, Step::signal_setup, errno);
  mark(plan, Phase::namespaces_set);

  // The reaper gives up its privileges before the tool exists, so the tool never shares the
  // namespace with a privileged process it could reach.
  if (plan.landlock) {
    keep_caller_identity(plan);
  } else {
    drop_identity(plan);
  }
  // Checked as the tool's identity: a directory it cannot enter is a setup error, not a surprise.
  if (::chdir(plan.cwd) != 0) fail(plan, Step::cwd, errno);
  // Not dumpable (set after the uid change, which resets it): the tool, same uid, cannot ptrace
  // its init or read /proc/1/mem.
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) fail(plan, Step::not_dumpable, errno);
  mark(plan, Phase::identity_dropped);

  const int pty_slave = plan.pty ? open_pty(plan) : -1;
  const pid_t tool = start_tool(plan, pty_slave);
  const Reaper reaper{signal_fd,
                      plan.go_fd,
                      plan.report_fd,
                      plan.trace_timing,
                      tool,
                      plan.landlock,
                      static_cast<pid_t>(::getppid())};
  // The tool runs; the init needs nothing of the caller's any more.
  let_go_of_caller_memory(maps_fd);
  reap(reaper);
}

}  // namespace jail::child
