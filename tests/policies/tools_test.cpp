// lint, explain and disassemble: the reviewer's view of a policy.
#include <gtest/gtest.h>
#include <sys/syscall.h>

#include "policy/compile.hpp"
#include "policy/diff.hpp"
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
      "allow clone3\n");
  ASSERT_EQ(ds.size(), 7u) << format(ds);
  EXPECT_EQ(ds[0].severity, Severity::warning);
  EXPECT_EQ(ds[0].where.line, 1);
  EXPECT_NE(ds[0].message.find("'default allow'"), std::string::npos);
  EXPECT_EQ(ds[1].where.line, 3);
  EXPECT_EQ(ds[1].message,
            "this rule for 'getppid' never applies: the unconditional rule at t.policy:2 decides "
            "first");
  for (int i = 2; i < 6; ++i) {
    EXPECT_EQ(ds[static_cast<std::size_t>(i)].where.line, i + 2);
    EXPECT_NE(ds[static_cast<std::size_t>(i)].message.find("can never hold"), std::string::npos);
  }
  // clone3 is answered ENOSYS by the baseline whatever a policy says.
  EXPECT_EQ(ds[6].where.line, 9);
  EXPECT_NE(ds[6].message.find("baseline.policy:"), std::string::npos) << ds[6].message;
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

TEST(Diff, ComparesDecisionsNotText) {
  Policy a = parse_policy(
      "default errno EPERM\nallow read write\n"
      "allow socket if arg0 == AF_UNIX\nkill ptrace\n",
      "a.policy");
  // Same decisions written differently: a number for a constant, another rule order for
  // different syscalls, an unreachable rule after an unconditional one.
  Policy same = parse_policy(
      "default errno EPERM\nkill ptrace\nallow socket if arg0 == 1\n"
      "allow write read\nallow read if arg0 == 3\n",
      "same.policy");
  EXPECT_TRUE(diff(a, same).empty()) << diff_text(diff(a, same));
  Policy b = parse_policy(
      "default errno EPERM\nallow read write\n"
      "allow socket if arg0 == AF_INET\n# debugger\nallow ptrace\n",
      "b.policy");
  PolicyDiff d = diff(a, b);
  ASSERT_EQ(d.syscalls.size(), 2u) << diff_text(d);
  EXPECT_EQ(d.syscalls[0].syscall, "socket");
  EXPECT_EQ(d.syscalls[1].syscall, "ptrace");
  EXPECT_EQ(d.syscalls[1].before, (std::vector<std::string>{"kill  (a.policy:4)"}));
  EXPECT_EQ(d.syscalls[1].after, (std::vector<std::string>{"allow  (b.policy:5)"}));
  EXPECT_EQ(d.syscalls[0].after.back(), "otherwise errno EPERM  (default)");
  Policy c = parse_policy(
      "default kill\nallow read write\nallow socket if arg0 == AF_UNIX\n"
      "kill ptrace\n",
      "c.policy");
  PolicyDiff dc = diff(a, c);
  EXPECT_EQ(dc.default_before, "errno EPERM");
  EXPECT_EQ(dc.default_after, "kill");
  // socket falls through to the default in both; so do the baseline's conditional rules.
  bool socket_listed = false;
  for (const auto& s : dc.syscalls) socket_listed = socket_listed || s.syscall == "socket";
  EXPECT_TRUE(socket_listed);
  EXPECT_NE(diff_text(dc).find("default: errno EPERM → kill"), std::string::npos);
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
  EXPECT_EQ(notify.find("ERRNO"), std::string::npos);
}

}  // namespace
}  // namespace jail::policy
