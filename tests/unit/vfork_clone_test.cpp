// runsc's keeper starts runsc's process with child::vfork_clone (child/vfork_clone.hpp): it
// shares the keeper's memory, runs on a stack of its own, and the keeper sleeps until the exec.
// Each of those is what keeps the keeper whole; each is checked here on a bare clone.
#include <linux/sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

#include <gtest/gtest.h>

#include "child/raw_syscall.hpp"
#include "child/vfork_clone.hpp"

namespace {

namespace raw = jail::child::raw;

constexpr std::size_t kStackBytes = 64 * 1024;

// What a child saw and did, in the parent's memory.
struct Shared {
  volatile int written = 0;
  std::uintptr_t child_local = 0;
  char* const* argv = nullptr;
};

// Sleeps 100 ms, then writes: a parent that went on before the child's end would not see it.
void write_after_a_while(void* argument) {
  auto* shared = static_cast<Shared*>(argument);
  int local = 0;
  shared->child_local = reinterpret_cast<std::uintptr_t>(&local);
  const timespec a_while{0, 100 * 1000 * 1000};
  raw::call(SYS_nanosleep, &a_while, nullptr);
  shared->written = 42;
  raw::exit_group(7);
}

void exec_argv(void* argument) {
  auto* shared = static_cast<Shared*>(argument);
  raw::call(SYS_execve, shared->argv[0], shared->argv, environ);
  raw::exit_group(127);
}

int wait_status(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

clone_args with_sigchld() {
  clone_args args{};
  args.exit_signal = SIGCHLD;
  return args;
}

TEST(VforkClone, TheChildSharesTheParentsMemoryOnItsOwnStackAndTheParentWaitsForItsEnd) {
  if (!jail::child::kVforkCloneAvailable) {
    GTEST_SKIP() << "vfork_clone is not used in this build (sanitized, or not x86-64): the keeper "
                    "forks instead";
  }
  alignas(16) static char stack[kStackBytes];
  Shared shared;
  const long pid =
      jail::child::vfork_clone(with_sigchld(), stack, sizeof stack, write_after_a_while, &shared);
  ASSERT_GT(pid, 0) << "clone3: " << -pid;
  // Back only once the child ended, and what it wrote is in this process's memory.
  EXPECT_EQ(shared.written, 42);
  const auto stack_start = reinterpret_cast<std::uintptr_t>(stack);
  EXPECT_GE(shared.child_local, stack_start);
  EXPECT_LT(shared.child_local, stack_start + sizeof stack);
  const int status = wait_status(static_cast<pid_t>(pid));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 7);
}

TEST(VforkClone, TheParentGoesOnOnceTheChildHasExecdNotWhenItEnds) {
  if (!jail::child::kVforkCloneAvailable) {
    GTEST_SKIP() << "vfork_clone is not used in this build (sanitized, or not x86-64): the keeper "
                    "forks instead";
  }
  alignas(16) static char stack[kStackBytes];
  char sleep_path[] = "/bin/sleep";
  char seconds[] = "5";
  char* argv[] = {sleep_path, seconds, nullptr};
  Shared shared;
  shared.argv = argv;
  const long pid =
      jail::child::vfork_clone(with_sigchld(), stack, sizeof stack, exec_argv, &shared);
  ASSERT_GT(pid, 0) << "clone3: " << -pid;
  // The exec'd sleep is still running: the clone returned at its exec.
  siginfo_t info{};
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT), 0);
  EXPECT_EQ(info.si_pid, 0) << "the child had already ended when the clone returned";
  ASSERT_EQ(::kill(static_cast<pid_t>(pid), SIGKILL), 0);
  const int status = wait_status(static_cast<pid_t>(pid));
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
}

TEST(VforkClone, AFailedCloneReturnsItsErrnoAndStartsNothing) {
  if (!jail::child::kVforkCloneAvailable) {
    GTEST_SKIP() << "vfork_clone is not used in this build (sanitized, or not x86-64): the keeper "
                    "forks instead";
  }
  alignas(16) static char stack[kStackBytes];
  clone_args args = with_sigchld();
  args.flags = CLONE_THREAD;  // without CLONE_SIGHAND: the kernel refuses it
  Shared shared;
  const long result =
      jail::child::vfork_clone(args, stack, sizeof stack, write_after_a_while, &shared);
  EXPECT_EQ(result, -EINVAL);
  EXPECT_EQ(shared.written, 0);
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

}  // namespace
