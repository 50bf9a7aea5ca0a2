// Notify routing: every non-allow outcome reaches a supervisor (here, the test) through the
// seccomp listener; the supervisor answers with evaluate()'s decision.
#include <errno.h>
#include <gtest/gtest.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "policy/compile.hpp"
#include "policy/evaluate.hpp"

namespace jail::policy {
namespace {

struct Seen {
  int nr;
  std::uint64_t arg0;
  Action action;
  int line;
};

TEST(Notify, SupervisorAnswersWithTheEvaluator) {
  Policy p = parse_policy(
      "default allow\n"
      "errno EACCES getppid if arg0 == 1\n"
      "log getppid if arg0 == 2\n"
      "kill getppid if arg0 == 3\n",
      "t.policy");
  Program prog = compile(p, Routing::notify);
  int to_parent[2];
  ASSERT_EQ(pipe(to_parent), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(to_parent[0]);
    sock_fprog fprog = prog.fprog();
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) _exit(90);
    long fd =
        syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fprog);
    if (fd < 0) _exit(91);
    int listener = static_cast<int>(fd);
    if (write(to_parent[1], &listener, sizeof listener) != sizeof listener) _exit(92);
    long denied = syscall(SYS_getppid, 1);
    int denied_errno = errno;
    long logged = syscall(SYS_getppid, 2);
    if (denied != -1 || denied_errno != EACCES) _exit(93);
    if (logged <= 0) _exit(94);
    syscall(SYS_getppid, 3);  // the supervisor kills us here
    _exit(95);
  }
  close(to_parent[1]);
  int child_fd = -1;
  ASSERT_EQ(read(to_parent[0], &child_fd, sizeof child_fd), static_cast<ssize_t>(sizeof child_fd));
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  ASSERT_GE(pidfd, 0);
  int listener = static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, child_fd, 0));
  ASSERT_GE(listener, 0) << "pidfd_getfd: " << strerror(errno);

  std::vector<Seen> seen;
  for (int i = 0; i < 3; ++i) {
    seccomp_notif req{};
    ASSERT_EQ(ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req), 0) << strerror(errno);
    Decision d = evaluate(p, req.data);
    seen.push_back(Seen{req.data.nr, req.data.args[0], d.action, d.where.line});
    seccomp_notif_resp resp{};
    resp.id = req.id;
    if (d.action.kind == ActionKind::errno_code) {
      resp.error = -d.action.errno_value;
    } else if (d.action.kind == ActionKind::log || d.action.kind == ActionKind::allow) {
      resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    } else {
      kill(pid, SIGKILL);
      break;
    }
    ASSERT_EQ(ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp), 0) << strerror(errno);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  close(listener);
  close(pidfd);
  close(to_parent[0]);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].nr, SYS_getppid);
  EXPECT_EQ(seen[0].arg0, 1u);
  EXPECT_EQ(seen[0].action, (Action{ActionKind::errno_code, EACCES}));
  EXPECT_EQ(seen[0].line, 2);
  EXPECT_EQ(seen[1].action.kind, ActionKind::log);
  EXPECT_EQ(seen[2].action.kind, ActionKind::kill);
  EXPECT_EQ(seen[2].line, 4);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exited " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
}

// Runs `calls` in a child under `prog` with the listener closed: no supervisor, so a notified
// call fails with ENOSYS. The child's exit code (91: the filter could not be installed), or -1.
template <typename Calls>
int exit_code_without_supervisor(Program prog, Calls calls) {
  pid_t pid = fork();
  if (pid == 0) {
    sock_fprog fprog = prog.fprog();
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    long fd =
        syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fprog);
    if (fd < 0) _exit(91);
    close(static_cast<int>(fd));
    _exit(calls());
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

TEST(Notify, AllowedCallsNeverReachTheSupervisor) {
  // With notify routing an allowed call must not block: the child would hang without a
  // supervisor. It runs with no one listening, so a wrong route shows up as ENOSYS.
  Policy p = parse_policy("default allow\nerrno EACCES getppid if arg0 == 1\n", "t.policy");
  EXPECT_EQ(exit_code_without_supervisor(compile(p, Routing::notify),
                                         [] {
                                           if (syscall(SYS_getppid, 0) <= 0) return 92;
                                           long r = syscall(SYS_getppid, 1);
                                           return r == -1 && errno == ENOSYS ? 0 : 93;
                                         }),
            0);
}

// A quiet errno is answered by the filter itself under notify routing, a loud one is not. With
// no one listening, a notified call fails with ENOSYS, so the errnos tell the routes apart.
TEST(Notify, QuietRefusalsAreAnsweredInTheKernel) {
  Policy p = parse_policy(
      "default allow\nquietly errno EACCES getppid if arg0 == 1\nerrno EACCES getppid\n",
      "t.policy");
  EXPECT_EQ(exit_code_without_supervisor(compile(p, Routing::notify),
                                         [] {
                                           long quiet = syscall(SYS_getppid, 1);
                                           if (quiet != -1 || errno != EACCES) return 92;
                                           long loud = syscall(SYS_getppid, 2);
                                           return loud == -1 && errno == ENOSYS ? 0 : 93;
                                         }),
            0);
}

}  // namespace
}  // namespace jail::policy
