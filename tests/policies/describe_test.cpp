// Denial reports name the call the way a reviewer reads it.
#include <gtest/gtest.h>
#include <linux/audit.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include "policy/describe.hpp"
#include "policy_cli.hpp"

namespace jail::policy {
namespace {

using policy_test::call;

TEST(Describe, NamesConstantsAndDropsTrailingZeros) {
  EXPECT_EQ(describe_call(call(SYS_ptrace, {PTRACE_ATTACH, 1})), "ptrace(PTRACE_ATTACH, 1)");
  EXPECT_EQ(describe_call(call(SYS_ioctl, {0, TIOCSTI | (1ULL << 32), 0x7ffd0000})),
            "ioctl(0, TIOCSTI, 0x7ffd0000)");
  EXPECT_EQ(describe_call(call(SYS_clone, {CLONE_NEWUSER | SIGCHLD})),
            "clone(CLONE_NEWUSER|SIGCHLD)");
  EXPECT_EQ(describe_call(call(SYS_getpid)), "getpid()");
  EXPECT_EQ(describe_call(call(SYS_read, {3, 0, 4096})), "read(3, 0, 0x1000)");
  seccomp_data i386 = call(20);
  i386.arch = AUDIT_ARCH_I386;
  EXPECT_EQ(describe_call(i386), "i386 syscall 20");
  seccomp_data x32{};
  x32.arch = AUDIT_ARCH_X86_64;
  x32.nr = 0x40000000 | 39;
  EXPECT_EQ(describe_call(x32), "x32 syscall 39");
  seccomp_data arm{};
  arm.arch = AUDIT_ARCH_AARCH64;
  arm.nr = 172;
  EXPECT_EQ(describe_call(arm), "syscall 172 of foreign architecture 0xc00000b7");
}

TEST(Describe, DecisionLineNamesPolicyLineAndOutcome) {
  Policy p = parse_policy("default errno EPERM\nkill ptrace\n", "python.policy");
  auto d = call(SYS_ptrace, {PTRACE_ATTACH, 1});
  EXPECT_EQ(describe_decision(d, evaluate(p, d)),
            "ptrace(PTRACE_ATTACH, 1) by policy python.policy:2 → killed");
  auto m = call(SYS_mount);
  EXPECT_EQ(describe_decision(m, evaluate(p, m)),
            "mount() by policy python.policy:1 (default) → errno EPERM");
}

}  // namespace
}  // namespace jail::policy
