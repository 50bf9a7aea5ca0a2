// The language: every construct parses to the IR it means, and every mistake is reported with
// its message, line, column and caret — all of them in one pass.
#include <errno.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "policy/constants.hpp"
#include "policy/policy.hpp"
#include "policy/syscalls.hpp"

namespace jail::policy {
namespace {

int nr(const char* name) {
  return *syscall_number(name);
}

// The rules a test policy adds, without the baseline that every policy starts with.
std::vector<Rule> own_rules(const Policy& p) {
  std::vector<Rule> out;
  for (const auto& r : p.rules)
    if (r.where.file != "baseline.policy") out.push_back(r);
  return out;
}

std::vector<Diagnostic> errors_of(std::string_view text) {
  LoadResult r = try_parse_policy(text, "t.policy");
  EXPECT_FALSE(r.policy.has_value());
  return r.diagnostics;
}

void expect_error(const Diagnostic& d, int line, int col, const std::string& message) {
  EXPECT_EQ(d.severity, Severity::error);
  EXPECT_EQ(d.where.file, "t.policy");
  EXPECT_EQ(d.where.line, line) << d.message;
  EXPECT_EQ(d.where.column, col) << d.message;
  EXPECT_EQ(d.message, message);
}

TEST(Parser, DefaultAndSimpleRules) {
  Policy p = parse_policy(
      "# a comment\ndefault errno EPERM\nallow read write   # trailing\n"
      "kill ptrace\n\nlog getppid\ntrap getpid\nerrno 13 open\n",
      "t.policy");
  EXPECT_EQ(p.default_action, (Action{ActionKind::errno_code, EPERM}));
  EXPECT_EQ(p.default_where.line, 2);
  auto rules = own_rules(p);
  ASSERT_EQ(rules.size(), 6u);
  EXPECT_EQ(rules[0].syscall, nr("read"));
  EXPECT_EQ(rules[0].action.kind, ActionKind::allow);
  EXPECT_FALSE(rules[0].condition.has_value());
  EXPECT_EQ(rules[0].where.line, 3);
  EXPECT_EQ(rules[0].where.column, 7);
  EXPECT_EQ(rules[1].syscall, nr("write"));
  EXPECT_EQ(rules[1].where.column, 12);
  EXPECT_EQ(rules[2].action.kind, ActionKind::kill);
  EXPECT_EQ(rules[3].action.kind, ActionKind::log);
  EXPECT_EQ(rules[4].action.kind, ActionKind::trap);
  EXPECT_EQ(rules[5].action, (Action{ActionKind::errno_code, 13}));
  EXPECT_EQ(to_string(rules[5].action), "errno EACCES");
}

TEST(Parser, QuietlyMarksAnErrnoRuleAndNothingElse) {
  Policy p = parse_policy("default allow\nquietly errno ENOSYS getppid\nerrno ENOSYS getpid\n",
                          "t.policy");
  auto rules = own_rules(p);
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_TRUE(rules[0].action.quiet);
  EXPECT_FALSE(rules[1].action.quiet);
  EXPECT_EQ(to_string(rules[0].action), "quietly errno ENOSYS");
  // The same decision: diff, export and import see no difference.
  EXPECT_EQ(rules[0].action, rules[1].action);

  auto kill = errors_of("default allow\nquietly kill getppid\n");
  ASSERT_EQ(kill.size(), 1u);
  EXPECT_NE(kill[0].message.find("'quietly' goes with errno only"), std::string::npos)
      << kill[0].message;
  auto fallback = errors_of("quietly default errno EPERM\n");
  ASSERT_EQ(fallback.size(), 1u);
  auto quiet_default = errors_of("default quietly errno EPERM\n");
  ASSERT_EQ(quiet_default.size(), 1u);
  EXPECT_NE(quiet_default[0].message.find("a default cannot be 'quietly'"), std::string::npos)
      << quiet_default[0].message;
}

TEST(Parser, ComparisonOperatorsAndNumbers) {
  Policy p = parse_policy(
      "default allow\n"
      "errno EPERM getppid if arg0 == 10\n"
      "errno EPERM getppid if arg1 != 0x10\n"
      "errno EPERM getppid if arg2 < 010\n"
      "errno EPERM getppid if arg3 <= 18446744073709551615\n"
      "errno EPERM getppid if arg4 > 0\n"
      "errno EPERM getppid if arg5 >= 7\n",
      "t.policy");
  auto rules = own_rules(p);
  ASSERT_EQ(rules.size(), 6u);
  const CmpOp ops[] = {CmpOp::eq, CmpOp::ne, CmpOp::lt, CmpOp::le, CmpOp::gt, CmpOp::ge};
  const std::uint64_t values[] = {10, 16, 8, ~0ULL, 0, 7};
  for (int i = 0; i < 6; ++i) {
    const Condition& c = *rules[static_cast<std::size_t>(i)].condition;
    EXPECT_EQ(c.kind, Condition::Kind::compare);
    EXPECT_EQ(c.arg, i);
    EXPECT_EQ(c.op, ops[i]);
    EXPECT_EQ(c.value, values[i]);
    EXPECT_EQ(c.mask, ~0ULL);
  }
  EXPECT_EQ(rules[0].condition_text, "arg0 == 10");
}

TEST(Parser, MasksSetsConstantsAndBooleanStructure) {
  Policy p = parse_policy(
      "default allow\n"
      "allow clone if (arg0 & CLONE_NEWUSER) == 0\n"
      "allow socket if arg0 in {AF_UNIX, AF_INET6}\n"
      "allow mmap if (arg2 & (PROT_WRITE | PROT_EXEC)) != PROT_WRITE|PROT_EXEC && arg3 > 0 || "
      "(arg0 == 1 || arg1 == 2)\n",
      "t.policy");
  auto rules = own_rules(p);
  ASSERT_EQ(rules.size(), 3u);
  const Condition& clone = *rules[0].condition;
  EXPECT_EQ(clone.mask, static_cast<std::uint64_t>(CLONE_NEWUSER));
  EXPECT_EQ(clone.value, 0u);
  const Condition& set = *rules[1].condition;
  ASSERT_EQ(set.kind, Condition::Kind::any_of);
  ASSERT_EQ(set.operands.size(), 2u);
  EXPECT_EQ(set.operands[0].value, static_cast<std::uint64_t>(AF_UNIX));
  EXPECT_EQ(set.operands[1].value, static_cast<std::uint64_t>(AF_INET6));
  EXPECT_EQ(set.operands[1].op, CmpOp::eq);
  // && binds tighter than ||: any_of(all_of(mask, gt), any_of(eq, eq)).
  const Condition& mm = *rules[2].condition;
  ASSERT_EQ(mm.kind, Condition::Kind::any_of);
  ASSERT_EQ(mm.operands.size(), 2u);
  ASSERT_EQ(mm.operands[0].kind, Condition::Kind::all_of);
  EXPECT_EQ(mm.operands[0].operands[0].mask, static_cast<std::uint64_t>(PROT_WRITE | PROT_EXEC));
  EXPECT_EQ(mm.operands[0].operands[0].value, static_cast<std::uint64_t>(PROT_WRITE | PROT_EXEC));
  EXPECT_EQ(mm.operands[0].operands[1].op, CmpOp::gt);
  ASSERT_EQ(mm.operands[1].kind, Condition::Kind::any_of);
  EXPECT_EQ(mm.operands[1].operands[1].arg, 1);
}

TEST(Parser, ThirtyTwoBitArgumentsAreNarrowed) {
  // ioctl's request is an unsigned int in the kernel: only the low half can be compared.
  Policy p = parse_policy(
      "default allow\nerrno EPERM ioctl if arg1 == TIOCSTI\n"
      "errno EPERM getppid if arg1 == TIOCSTI\n",
      "t.policy");
  auto rules = own_rules(p);
  EXPECT_EQ(rules[0].condition->mask, 0xffffffffULL);
  EXPECT_EQ(rules[1].condition->mask, ~0ULL);
}

TEST(Parser, NegativeNumbersAndKeywordLikeSyscallNames) {
  Policy p = parse_policy(
      "default allow\nerrno EPERM openat if arg0 == AT_FDCWD\n"
      "errno EPERM getppid if arg0 == -1\nkill kill if arg1 == SIGKILL\n",
      "t.policy");
  auto rules = own_rules(p);
  ASSERT_EQ(rules.size(), 3u);
  // openat's dirfd is an int: -100 compares on its low 32 bits.
  EXPECT_EQ(rules[0].condition->value, 0xffffff9cULL);
  EXPECT_EQ(rules[0].condition->mask, 0xffffffffULL);
  EXPECT_EQ(rules[1].condition->value, ~0ULL);
  EXPECT_EQ(rules[2].syscall, nr("kill"));
  EXPECT_EQ(rules[2].action.kind, ActionKind::kill);
}

TEST(Parser, EveryRuleNamesItsSyscalls) {
  Policy p = parse_policy("default kill\nallow read write close\n", "t.policy");
  auto rules = own_rules(p);
  ASSERT_EQ(rules.size(), 3u);
  EXPECT_EQ(rules[2].syscall, nr("close"));
  EXPECT_EQ(rules[2].where.column, 18);
}

TEST(Parser, SyntaxErrorsPointAtTheToken) {
  struct Case {
    const char* line;
    int column;
    const char* message;
  } cases[] = {
      {"alow read", 1, "unknown action 'alow' (did you mean allow?)"},
      {"allow", 6, "expected a syscall name after the action"},
      {"allow read if", 14, "expected an argument (arg0 … arg5), found end of line"},
      {"allow read if arg0", 19,
       "expected a comparison (== != < <= > >= or 'in'), found end of line"},
      {"allow read if arg0 = 1", 20, "'=' is not an operator; use '==' to compare"},
      {"allow read if arg7 == 1", 15, "no argument 'arg7': syscalls have arg0 … arg5"},
      {"allow read if arg0 & 1 == 1", 20, "put a mask in parentheses: (arg0 & MASK) == VALUE"},
      {"allow read if (arg0 == 1", 25, "expected ')' to close the group, found end of line"},
      {"allow read if arg0 in {1, 2", 28, "expected '}' to close the set, found end of line"},
      {"allow read if arg0 == 0x1g", 23, "malformed number '0x1g'"},
      {"allow read if arg0 == 99999999999999999999", 23,
       "number '99999999999999999999' does not fit in 64 bits"},
      {"allow read if arg0 == 1 arg1", 25, "unexpected 'arg1' after the condition"},
      {"allow read $", 12, "unexpected character '$'"},
      {"allow read if arg0 == -", 23, "unexpected character '-'"},
      {"allow read if arg0 == -99999999999999999999", 23,
       "number '99999999999999999999' does not fit in 64 bits"},
      {"include other.policy", 9, "expected a quoted file or policy name after 'include'"},
      {"include \"x.policy", 9, "unterminated string (missing closing '\"')"},
      {"errno", 6, "'errno' needs a value: a name like EPERM or a number"},
      {"errno if", 7, "'errno' needs a value: a name like EPERM or a number"},
      {"default", 8, "expected an action (allow, errno, kill, log, trap), found end of line"},
      {"default allow read", 15, "unexpected 'read' after the default action"},
      {"42 read", 1, "expected an action, 'default', 'include' or 'within'"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.line);
    auto ds = errors_of(std::string("default allow\n") + c.line + "\n");
    ASSERT_EQ(ds.size(), 1u) << format(ds);
    expect_error(ds[0], 2, c.column, c.message);
    EXPECT_EQ(ds[0].source_line, c.line);
  }
}

TEST(Parser, SemanticErrorsSuggestTheNearestName) {
  auto ds = errors_of(
      "default errno EPRM\n"
      "allow opne read\n"
      "allow ioctl if arg1 in {TCGETZ, FIONREAD, TIOCSTII}\n"
      "errno 0 getpid\n"
      "errno 5000 getpid\n"
      "allow xyzzy_nothing_like_it\n"
      "allow socketcall\n");
  ASSERT_EQ(ds.size(), 8u) << format(ds);
  expect_error(ds[0], 1, 15, "unknown errno name 'EPRM' (did you mean EPERM?)");
  expect_error(ds[1], 2, 7, "unknown syscall 'opne' (did you mean open?)");
  expect_error(ds[2], 3, 25, "unknown constant 'TCGETZ' (did you mean TCGETS?)");
  expect_error(ds[3], 3, 43, "unknown constant 'TIOCSTII' (did you mean TIOCSTI?)");
  expect_error(ds[4], 4, 7, "errno 0 is out of range: use 1 … 4094 ('errno 0' fakes success)");
  expect_error(ds[5], 5, 7, "errno 5000 is out of range: use 1 … 4094");
  expect_error(ds[6], 6, 7, "unknown syscall 'xyzzy_nothing_like_it'");
  // socketcall is an i386 multiplexer, not an x86_64 syscall.
  EXPECT_EQ(ds[7].where.line, 7);
  EXPECT_EQ(ds[7].message.rfind("unknown syscall 'socketcall'", 0), 0u) << ds[7].message;
}

TEST(Parser, AllErrorsOfAFileAreReportedInOnePass) {
  auto ds = errors_of(
      "default allow\nalow read\nallow opne\nallow read if arg0 = 1\n"
      "allow write if arg0 == NOPE\ndefault kill\n");
  ASSERT_EQ(ds.size(), 5u) << format(ds);
  EXPECT_EQ(ds[0].where.line, 2);
  EXPECT_EQ(ds[1].where.line, 3);  // syntax and name errors interleave in reading order
  EXPECT_EQ(ds[2].where.line, 4);
  EXPECT_EQ(ds[3].where.line, 5);
  expect_error(ds[4], 6, 9, "second 'default' in this file (the first is at line 1)");
}

TEST(Parser, MissingDefaultIsAnError) {
  auto ds = errors_of("allow read\n");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].where.line, 0);
  EXPECT_EQ(format(ds[0]),
            "t.policy: no 'default' line: every policy names what happens to syscalls no rule "
            "decides, e.g. 'default errno EPERM'\n");
}

TEST(Parser, DiagnosticFormatHasLineAndCaret) {
  auto ds = errors_of("default allow\nallow ioctl if arg1 == TCGETZ\n");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(format(ds[0]),
            "t.policy:2:24: unknown constant 'TCGETZ' (did you mean TCGETS?)\n"
            "allow ioctl if arg1 == TCGETZ\n"
            "                       ^\n");
}

TEST(Parser, CaretFollowsTabs) {
  auto ds = errors_of("default allow\n\tallow\tnosuch\n");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].where.column, 8);
  EXPECT_EQ(format(ds[0]).substr(format(ds[0]).rfind('\n', format(ds[0]).size() - 2) + 1),
            "\t     \t^\n");
}

}  // namespace
}  // namespace jail::policy
