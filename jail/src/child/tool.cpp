// Child side, after clone: no allocation, no exceptions, no logging. See plan.hpp.
//
// The seccomp filter must be installed by the tool itself, right before execve, and the listener
// it returns must reach the supervisor without the tool making any other syscall under its
// policy. So the tool is cloned with CLONE_FILES | CLONE_VFORK: it shares the init's descriptor
// table, installs the filter (the listener lands in the shared table, at the lowest free number,
// which the init knows beforehand) and execs. execve gives the tool a private copy of the table
// and closes the listener there (it is close-on-exec); the init, resumed by the vfork
// completion, still holds it and sends it to the parent. The tool never holds the listener
// after execve, so it cannot answer its own notifications.
#include "child/tool.hpp"

#include <fcntl.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdint>

#include "child/exec.hpp"
#include "child/fail.hpp"
#include "child/terminal.hpp"
#include "child/timing.hpp"

namespace jail::child {
namespace {

// The tool starts with default signal handling and an empty mask, whatever the caller had.
void reset_signals() {
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    ::sigaction(sig, &default_action, nullptr);  // EINVAL for glibc's reserved signals is fine
  }
  sigset_t empty;
  sigemptyset(&empty);
  ::sigprocmask(SIG_SETMASK, &empty, nullptr);
}

// The ruleset of Landlock ABI 6, which the build host's linux/landlock.h may predate.
struct LandlockScopedRuleset {
  std::uint64_t handled_access_fs;
  std::uint64_t handled_access_net;
  std::uint64_t scoped;
};
constexpr std::uint64_t kScopeAbstractUnixSocket = 1ULL << 0;

// A Landlock domain that handles no access right, only the abstract-socket scope: the tool and
// what it starts connect only to abstract Unix sockets made inside it. With --net host these are
// the host's (X11's, daemons' control sockets); in the jail's own network namespace there are
// none of the host's anyway. no_new_privs is set already (drop_identity).
void scope_abstract_sockets(const Plan& plan) {
  const LandlockScopedRuleset ruleset{0, 0, kScopeAbstractUnixSocket};
  const long fd = ::syscall(SYS_landlock_create_ruleset, &ruleset, sizeof ruleset, 0);
  if (fd < 0) fail(plan, Step::landlock_scope, errno);
  const long restricted = ::syscall(SYS_landlock_restrict_self, fd, 0);
  const int err = errno;
  ::close(static_cast<int>(fd));
  if (restricted != 0) fail(plan, Step::landlock_scope, err);
}

[[noreturn]] void become_tool(const Plan& plan, int pty_slave) {
  reset_signals();
  // Its own session: no controlling terminal, so TIOCSTI into the caller's terminal is refused.
  if (::setsid() < 0) fail(plan, Step::setsid, errno);
  if (pty_slave >= 0) attach_pty(plan, pty_slave);
  for (std::size_t i = 0; i < plan.rlimit_count; ++i) {
    const rlimit value{plan.rlimits[i].soft, plan.rlimits[i].hard};
    if (::setrlimit(static_cast<__rlimit_resource>(plan.rlimits[i].resource), &value) != 0) {
      fail(plan, Step::rlimits, errno, plan.rlimits[i].resource);
    }
  }
  // CLOEXEC rather than close: the table is shared with the init until execve, and the report
  // socket must survive until execve succeeds.
  if (::syscall(SYS_close_range, 3, UINT_MAX, CLOSE_RANGE_CLOEXEC) != 0) {
    fail(plan, Step::close_inherited_fds, errno);
  }
  if (plan.landlock) {
    // The whole confinement of the Landlock mode: its files, its signals, its abstract sockets.
    if (::syscall(SYS_landlock_restrict_self, plan.landlock_ruleset_fd, 0) != 0)
      fail(plan, Step::landlock, errno);
  } else if (plan.scope_abstract_sockets) {
    scope_abstract_sockets(plan);
  }
  // Whether the command is there, asked while the filter still allows it: an ENOENT from
  // execve then means its interpreter or loader is missing, not the command.
  const CommandFile command = find_command_file(plan);
  // Last before execve: the policy only has to allow execve (and write + exit_group, or exit under
  // an open-files limit, to report a failed exec), which launch() checks.
  if (plan.seccomp_program != nullptr &&
      ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
                plan.seccomp_program) < 0) {
    fail(plan, Step::seccomp, errno);
  }
  // Only write (which launch() checks the policy allows) and the vDSO's clock from here on.
  mark(plan, Phase::seccomp_loaded);
  mark(plan, Phase::exec);
  exec_tool(plan, command);
}

int lowest_free_fd(const Plan& plan) {
  const int probe = ::fcntl(0, F_DUPFD_CLOEXEC, 0);
  if (probe < 0) fail(plan, Step::seccomp_listener, errno);
  ::close(probe);
  return probe;
}

}  // namespace

pid_t start_tool(const Plan& plan, int pty_slave) {
  const int listener = plan.seccomp_program != nullptr ? lowest_free_fd(plan) : -1;
  const long tool = ::syscall(SYS_clone, CLONE_VFORK | CLONE_FILES | SIGCHLD, 0, 0, 0, 0);
  if (tool < 0) fail(plan, Step::fork_tool, errno);
  if (tool == 0) become_tool(plan, pty_slave);

  // The tool has exec'd or exited. A listener at the expected number is the tool's; if the tool
  // died before installing its filter there is none, and its report says why.
  if (listener >= 0 && ::fcntl(listener, F_GETFD) >= 0) {
    if (!send_fd(plan.report_fd, ReportKind::seccomp_listener, listener)) {
      // Without a supervisor the tool's denied syscalls would hang: end the jail instead.
      ::kill(static_cast<pid_t>(tool), SIGKILL);
      fail(plan, Step::seccomp_listener, errno);
    }
    ::close(listener);
  }
  if (pty_slave >= 0) ::close(pty_slave);
  return static_cast<pid_t>(tool);
}

}  // namespace jail::child
