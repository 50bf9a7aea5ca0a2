// lint, explain and disassemble: the reviewer's view of a policy.
#include <gtest/gtest.h>
#include <sys/syscall.h>

#include "policy/compile.hpp"
#include "policy/tools.hpp"

namespace jail::policy {
namespace {

std::vector<Diagnostic> lint_text(const std::string& text) {
  return lint(parse_policy(text, "t.policy"));
}

TEST(Lint, DangerousAllowanceNeedsAJustificationAbove) {
  auto ds = lint_text(
      "default errno EPERM\nallow ptrace\n# debuggers in the jail\nallow bpf\n"
      "log perf_event_open\nkill kexec_load\n");
  ASSERT_EQ(ds.size(), 2u) << format(ds);
  EXPECT_EQ(ds[0].severity, Severity::error);
  EXPECT_EQ(ds[0].where.line, 2);
  EXPECT_EQ(ds[0].where.column, 7);
  EXPECT_EQ(ds[0].message,
            "dangerous syscall 'ptrace' allowed without a justification comment on the line above");
  EXPECT_EQ(ds[1].where.line, 5);  // log allows too
}

TEST(Lint, ShadowedRulesDefaultAllowAndImpossibleConditions) {
  auto ds = lint_text(
      "default allow\n"
      "allow getppid\n"
      "errno EPERM getppid if arg0 == 1\n"
      "errno EPERM getpid if (arg0 & 0xf0) == 0x1\n"
      "errno EPERM gettid if arg1 < 0\n"
      "errno EPERM getuid if (arg0 & 0xff) > 0xff\n"
      "errno EPERM getgid if arg0 == 1 && (arg1 & 1) == 2\n"
      "errno EPERM geteuid if (arg0 & 1) == 2 || arg0 == 3\n"
      // Contradictions only the comparisons together show.
      "errno EPERM getegid if arg0 == 1 && arg0 == 2\n"
      "errno EPERM getpgrp if arg0 > 5 && arg0 < 3\n"
      "allow clone3\n");
  ASSERT_EQ(ds.size(), 9u) << format(ds);
  EXPECT_EQ(ds[0].severity, Severity::warning);
  EXPECT_EQ(ds[0].where.line, 1);
  EXPECT_NE(ds[0].message.find("'default allow'"), std::string::npos);
  EXPECT_EQ(ds[1].where.line, 3);
  EXPECT_EQ(ds[1].message,
            "this rule for 'getppid' never applies: the unconditional rule at t.policy:2 decides "
            "first");
  for (int i = 2; i < 8; ++i) {
    EXPECT_EQ(ds[static_cast<std::size_t>(i)].where.line, i + 2 + (i >= 6 ? 1 : 0));
    EXPECT_NE(ds[static_cast<std::size_t>(i)].message.find("can never hold"), std::string::npos);
  }
  // clone3 is answered ENOSYS by the baseline whatever a policy says.
  EXPECT_EQ(ds[8].where.line, 11);
  EXPECT_NE(ds[8].message.find("baseline.policy:"), std::string::npos) << ds[8].message;
  EXPECT_EQ(format(ds[1]),
            "t.policy:3:13: warning: this rule for 'getppid' never applies: the unconditional "
            "rule at t.policy:2 decides first\nerrno EPERM getppid if arg0 == 1\n            ^\n");
}

TEST(Explain, TextAndJsonNameTheDecidingLines) {
  Policy p = parse_policy(
      "default errno EPERM\nallow ioctl if arg1 in {TCGETS, FIONREAD}\nallow read\n", "t.policy");
  std::string text = explain_text(p, {"ioctl", "read", "write"});
  EXPECT_NE(text.find("ioctl"), std::string::npos);
  EXPECT_NE(text.find("if arg1 in {TIOCSTI, TIOCLINUX}"), std::string::npos) << text;
  EXPECT_NE(text.find("baseline.policy:"), std::string::npos);
  EXPECT_NE(text.find("if arg1 in {TCGETS, FIONREAD}"), std::string::npos);
  EXPECT_NE(text.find("t.policy:2"), std::string::npos);
  EXPECT_NE(text.find("otherwise (default)"), std::string::npos);
  EXPECT_NE(text.find("t.policy:3"), std::string::npos);
  auto j = explain_json(p, {"ioctl", "write"});
  ASSERT_EQ(j["syscalls"].size(), 2u);
  EXPECT_EQ(j["syscalls"][0]["syscall"], "ioctl");
  EXPECT_EQ(j["syscalls"][0]["nr"], SYS_ioctl);
  ASSERT_EQ(j["syscalls"][0]["rules"].size(), 2u);
  EXPECT_EQ(j["syscalls"][0]["rules"][1]["action"], "allow");
  EXPECT_EQ(j["syscalls"][0]["rules"][1]["condition"], "arg1 in {TCGETS, FIONREAD}");
  EXPECT_EQ(j["syscalls"][0]["rules"][1]["line"], 2);
  EXPECT_EQ(j["syscalls"][0]["otherwise"], "errno EPERM");
  EXPECT_TRUE(j["syscalls"][1]["rules"].empty());
  EXPECT_EQ(j["default"]["line"], 1);
  EXPECT_THROW((void)explain_text(p, {"reed"}), std::invalid_argument);
}

TEST(Disassemble, ShowsChecksDispatchAndReturns) {
  Policy p = parse_policy("default errno EPERM\nallow read\nkill ptrace\n", "t.policy");
  std::string text = disassemble(compile(p, Routing::direct));
  EXPECT_NE(text.find("ld   [4]"), std::string::npos) << text;
  EXPECT_NE(text.find("AUDIT_ARCH_X86_64"), std::string::npos);
  EXPECT_NE(text.find("x32 syscall bit"), std::string::npos);
  EXPECT_NE(text.find("; ptrace"), std::string::npos);
  EXPECT_NE(text.find("ret  ERRNO(EPERM)"), std::string::npos);
  EXPECT_NE(text.find("ret  KILL_PROCESS"), std::string::npos);
  EXPECT_EQ(text.find("KILL_THREAD"), std::string::npos);
  std::string notify = disassemble(compile(p, Routing::notify));
  EXPECT_NE(notify.find("ret  USER_NOTIF"), std::string::npos);
  // Under notify only the baseline's quiet refusals are answered in the kernel: ENOSYS for
  // clone3 and openat2, EOPNOTSUPP (printed ENOTSUP, the same number) for the setxattr family.
  EXPECT_EQ(notify.find("ERRNO(EPERM)"), std::string::npos) << notify;
  const auto quiet = notify.find("ret  ERRNO(ENOSYS)");
  ASSERT_NE(quiet, std::string::npos) << notify;
  const auto xattrs = notify.find("ret  ERRNO(ENOTSUP)", quiet + 10);
  ASSERT_NE(xattrs, std::string::npos) << notify;
  EXPECT_EQ(notify.find("ERRNO", xattrs + 10), std::string::npos) << notify;
}

}  // namespace
}  // namespace jail::policy
