// Probes that must run in a forked child: they change the calling process (namespaces, identity,
// seccomp filters, mounts) in ways doctor itself must never carry. Everything between fork and
// _exit is post-fork code: no allocation, no exceptions, no logging, only raw syscalls on values
// prepared before the fork.
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "doctor.hpp"

namespace jail::doctor {
namespace {

// The overflow uid/gid: an identity with no capabilities and no files of its own, which is what an
// unprivileged caller looks like to the kernel.
constexpr uid_t kNobody = 65534;

// A probe that has not reported back after this long is killed by its own alarm; the slowest one
// (a new network namespace) takes milliseconds.
constexpr unsigned kProbeSeconds = 5;

ProbeFailure fail(int step) {
  return ProbeFailure{step, errno};
}

// Raw syscalls, not glibc's setres*id: glibc broadcasts those to every thread with a signal, which
// is machinery post-fork code should not lean on.
ProbeFailure drop_to_nobody() {
  if (syscall(SYS_setgroups, 0, nullptr) != 0) return fail(1);
  if (syscall(SYS_setresgid, kNobody, kNobody, kNobody) != 0) return fail(2);
  if (syscall(SYS_setresuid, kNobody, kNobody, kNobody) != 0) return fail(3);
  return {};
}

void write_all(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    size -= static_cast<size_t>(n);
  }
}

}  // namespace

ProbeFailure probe_unshare(const ProbeArgs& args) {
  if (args.as_nobody) {
    ProbeFailure dropped = drop_to_nobody();
    if (dropped.step != 0) return dropped;
  }
  if (unshare(args.unshare_flags) != 0) return fail(4);
  return {};
}

ProbeFailure probe_seccomp_listener(const ProbeArgs&) {
  // Without no_new_privs an unprivileged process may not install a filter at all, and jail always
  // sets it, so the probe does the same.
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return fail(1);
  sock_filter allow[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
  sock_fprog program{};
  program.len = 1;
  program.filter = allow;
  long fd =
      syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &program);
  if (fd < 0) return fail(2);
  return {};
}

ProbeFailure probe_mount_api(const ProbeArgs&) {
  // A new user namespace first: that is how jail mounts, for root callers too, and a mount
  // namespace owned by a less privileged user namespace turns shared mounts into slaves, so
  // nothing done here can propagate back to the host.
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return fail(1);
  // Belt and braces: make the copy private before touching it.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return fail(2);
  // Recursive, because a non-recursive clone of a tree with locked submounts is refused (EINVAL)
  // inside a user namespace, and jail's binds are recursive for the same reason.
  int tree = open_tree(AT_FDCWD, "/", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
  if (tree < 0) return fail(3);
  mount_attr attr{};
  attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
  if (mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) != 0) {
    return fail(4);
  }
  int context = fsopen("tmpfs", FSOPEN_CLOEXEC);
  if (context < 0) return fail(5);
  if (fsconfig(context, FSCONFIG_SET_STRING, "size", "64k", 0) != 0) return fail(6);
  if (fsconfig(context, FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0) return fail(6);
  int tmpfs = fsmount(context, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
  if (tmpfs < 0) return fail(7);
  // Attach the detached tmpfs somewhere in this private namespace; it vanishes with the child.
  if (move_mount(tmpfs, "", AT_FDCWD, "/", MOVE_MOUNT_F_EMPTY_PATH) != 0) return fail(8);
  return {};
}

ProbeResult run_probe(ProbeFn fn, const ProbeArgs& args) {
  ProbeResult result;
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) {
    result.fork_error = errno;
    return result;
  }
  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child < 0) {
    result.fork_error = errno;
    close(report[0]);
    close(report[1]);
    return result;
  }
  if (child == 0) {
    close(report[0]);
    // Die with doctor, and on our own after a while, so no probe can be left behind.
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (getppid() != parent) _exit(1);
    alarm(kProbeSeconds);
    ProbeFailure failure = fn(args);
    write_all(report[1], &failure, sizeof failure);
    _exit(0);
  }
  close(report[1]);
  ProbeFailure failure;
  size_t got = 0;
  while (got < sizeof failure) {
    ssize_t n = read(report[0], reinterpret_cast<char*>(&failure) + got, sizeof failure - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  close(report[0]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (got == sizeof failure) {
    result.ran = true;
    result.failure = failure;
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  return result;
}

std::string errno_name(int error) {
  const char* name = strerrorname_np(error);
  std::string text = name != nullptr ? name : "errno " + std::to_string(error);
  return text + " (" + std::strerror(error) + ")";
}

std::string describe_failure(const ProbeResult& result,
                             const std::vector<std::string>& step_names) {
  if (result.fork_error != 0) return "could not fork the probe: " + errno_name(result.fork_error);
  if (!result.ran) {
    if (result.signal != 0) {
      const char* abbrev = sigabbrev_np(result.signal);
      return std::string("the probe was killed by SIG") + (abbrev != nullptr ? abbrev : "?");
    }
    return "the probe exited without reporting";
  }
  if (result.failure.step == 0) return "ok";
  const auto index = static_cast<size_t>(result.failure.step - 1);
  std::string step = index < step_names.size() ? step_names[index] : "step";
  return step + ": " + errno_name(result.failure.error);
}

}  // namespace jail::doctor
