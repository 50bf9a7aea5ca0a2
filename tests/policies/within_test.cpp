// `within "BOUND"`: a policy decides no call less strictly than its bound, whatever its own rules
// say; `jail policy learn` relies on it for "a learned policy is never wider than its base".
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/audit.h>
#include <sched.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "policy/constants.hpp"
#include "policy/diff.hpp"
#include "policy/evaluate.hpp"
#include "policy/syscalls.hpp"
#include "policy/tools.hpp"
#include "policy/value_names.hpp"
#include "policy_cli.hpp"

namespace jail::policy {
namespace {

using policy_test::call;

// Everything a greedy tool could ask for: its own rules allow what every base refuses.
const std::string kGreedyRules =
    "allow read write ptrace bpf mount kexec_load personality\n"
    "allow socket if arg0 in {AF_UNIX, AF_PACKET, AF_INET}\n"
    "allow clone\n"
    "allow ioctl\n";

TEST(Within, APolicyWithinEachShippedPolicyIsNeverWiderThanIt) {
  for (const auto& base : shipped_policy_names()) {
    SCOPED_TRACE(base);
    for (const std::string def : {"allow", "errno EPERM", "log"}) {
      const Policy bound = load_policy(base);
      const Policy greedy = parse_policy(
          "default " + def + "\nwithin \"" + base + "\"\n" + kGreedyRules, "greedy.policy");
      const PolicyDiff d = diff(bound, greedy);
      EXPECT_FALSE(d.wider()) << def << "\n" << diff_text(d);
      EXPECT_EQ(greedy.within, bound.name);
    }
  }
}

TEST(Within, TheBoundsKillsAndErrnosStayAndItsAllowsNarrow) {
  const Policy p =
      parse_policy("default errno EPERM\nwithin \"default\"\n" + kGreedyRules, "learned.policy");
  // default kills ptrace: killed, not allowed, not EPERM.
  EXPECT_EQ(evaluate(p, call(SYS_ptrace)).action.kind, ActionKind::kill);
  EXPECT_EQ(evaluate(p, call(SYS_ptrace)).where.file, "default.policy");
  // Both allow read: allowed, and the deciding line is the policy's own.
  EXPECT_EQ(evaluate(p, call(SYS_read)).action.kind, ActionKind::allow);
  EXPECT_EQ(evaluate(p, call(SYS_read)).where.file, "learned.policy");
  // default allows fstat, the policy's default refuses it.
  EXPECT_EQ(evaluate(p, call(SYS_fstat)).action, (Action{ActionKind::errno_code, EPERM}));
  // AF_PACKET: the policy allows it, default answers EAFNOSUPPORT, and that errno stays.
  EXPECT_EQ(evaluate(p, call(SYS_socket, {AF_PACKET})).action,
            (Action{ActionKind::errno_code, EAFNOSUPPORT}));
  EXPECT_EQ(evaluate(p, call(SYS_socket, {AF_UNIX})).action.kind, ActionKind::allow);
  // The baseline both start with still comes first: a namespace flag is killed.
  EXPECT_EQ(evaluate(p, call(SYS_clone, {CLONE_NEWUSER})).action.kind, ActionKind::kill);
  EXPECT_EQ(evaluate(p, call(SYS_clone, {CLONE_VM | CLONE_THREAD})).action.kind, ActionKind::allow);
}

TEST(Within, AStricterPolicyStaysAsStrictAsItWas) {
  const Policy p = parse_policy(
      "default kill\nwithin \"default\"\nallow read\nerrno EACCES openat\n", "strict.policy");
  EXPECT_EQ(evaluate(p, call(SYS_openat)).action, (Action{ActionKind::errno_code, EACCES}));
  EXPECT_EQ(evaluate(p, call(SYS_fstat)).action.kind, ActionKind::kill);
  EXPECT_EQ(evaluate(p, call(SYS_read)).action.kind, ActionKind::allow);
}

class WithinFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("policy-within-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  std::string first_error(const std::string& path) {
    const LoadResult r = try_load_policy(path);
    EXPECT_FALSE(r.policy.has_value());
    return r.diagnostics.empty() ? "" : r.diagnostics.front().message;
  }
  std::filesystem::path dir_;
};

TEST_F(WithinFiles, ABoundFileResolvesFromThePolicysDirectory) {
  write("bound.policy", "default errno EPERM\nallow read\nkill write\n");
  const Policy p = load_policy(write("top.policy", "default allow\nwithin \"bound.policy\"\n"));
  EXPECT_EQ(evaluate(p, call(SYS_read)).action.kind, ActionKind::allow);
  EXPECT_EQ(evaluate(p, call(SYS_write)).action.kind, ActionKind::kill);
  EXPECT_EQ(evaluate(p, call(SYS_getpid)).action, (Action{ActionKind::errno_code, EPERM}));
}

// The shipped baseline's rules are kept once, in front of the pairs; a file of the policy's own
// that is also called baseline.policy is not that baseline, as an included file or as the bound.
TEST_F(WithinFiles, AFileNamedLikeTheBaselineIsBoundedAllTheSame) {
  write("baseline.policy", "# mine\nallow ptrace\n");
  const Policy including = load_policy(
      write("inc.policy", "default allow\ninclude \"baseline.policy\"\nwithin \"default\"\n"));
  EXPECT_EQ(evaluate(including, call(SYS_ptrace)).action.kind, ActionKind::kill);
  write("baseline.policy", "default allow\nkill ptrace\n");
  write("top.policy", "default allow\nwithin \"baseline.policy\"\nallow ptrace\n");
  EXPECT_EQ(evaluate(load_policy((dir_ / "top.policy").string()), call(SYS_ptrace)).action.kind,
            ActionKind::kill);
  // Loaded by a relative path, the files' display names are "inc.policy", "baseline.policy".
  const auto was = std::filesystem::current_path();
  std::filesystem::current_path(dir_);
  write("baseline.policy", "# mine\nallow ptrace\n");
  const Policy relative = load_policy("inc.policy");
  write("baseline.policy", "default allow\nkill ptrace\n");
  const Policy relative_bound = load_policy("top.policy");
  std::filesystem::current_path(was);
  EXPECT_EQ(evaluate(relative, call(SYS_ptrace)).action.kind, ActionKind::kill);
  EXPECT_EQ(evaluate(relative_bound, call(SYS_ptrace)).action.kind, ActionKind::kill);
}

// A quiet refusal of the policy's own does not silence the bound's reported one.
TEST(Within, TheBoundsReportedRefusalStaysReported) {
  const Policy p = parse_policy(
      "default allow\nwithin \"default\"\nquietly errno EAFNOSUPPORT socket\n", "q.policy");
  const Action action = evaluate(p, call(SYS_socket, {AF_PACKET})).action;
  EXPECT_EQ(action, (Action{ActionKind::errno_code, EAFNOSUPPORT}));
  EXPECT_FALSE(action.quiet);
}

TEST_F(WithinFiles, MisuseIsAnErrorWithItsReason) {
  write("inc.policy", "within \"default\"\n");
  EXPECT_NE(first_error(write("a.policy", "default allow\ninclude \"inc.policy\"\n"))
                .find("belongs in the top file"),
            std::string::npos);
  EXPECT_NE(first_error(write("b.policy", "default allow\nwithin \"default\"\nwithin \"python\"\n"))
                .find("second 'within'"),
            std::string::npos);
  write("c1.policy", "default allow\nwithin \"c2.policy\"\n");
  write("c2.policy", "default allow\nwithin \"c1.policy\"\n");
  const LoadResult cycle = try_load_policy((dir_ / "c1.policy").string());
  EXPECT_NE(format(cycle.diagnostics).find("'within' cycle"), std::string::npos)
      << format(cycle.diagnostics);
  EXPECT_NE(first_error(write("d.policy", "default allow\nwithin \"defualt\"\n"))
                .find("did you mean default?"),
            std::string::npos);
  EXPECT_NE(first_error(write("e.policy", "default allow\nwithin \"nothere.policy\"\n"))
                .find("cannot read the file 'within' names"),
            std::string::npos);
  write("broken.policy", "default allow\nallow raed\n");
  const LoadResult broken =
      try_load_policy(write("f.policy", "default allow\nwithin \"broken.policy\"\n"));
  ASSERT_FALSE(broken.policy.has_value());
  EXPECT_NE(format(broken.diagnostics).find("unknown syscall 'raed'"), std::string::npos)
      << format(broken.diagnostics);
}

// Every name a learned condition can use reads back as the value it was written for.
TEST(ValueNames, EveryNameReadsBackAsItsValue) {
  struct Case {
    const char* syscall;
    int arg;
    std::vector<std::string_view> prefixes;
  };
  const Case cases[] = {{"ioctl", 1, {"TC", "TIOC", "FIO"}},
                        {"socket", 0, {"AF_"}},
                        {"fcntl", 1, {"F_"}},
                        {"prctl", 0, {"PR_"}},
                        {"madvise", 2, {"MADV_"}},
                        {"clone", 0, {"CLONE_"}},
                        {"ptrace", 0, {"PTRACE_"}}};
  for (const auto& c : cases) {
    for (const auto& constant : all_constants()) {
      bool mine = false;
      for (const auto prefix : c.prefixes) mine = mine || constant.name.starts_with(prefix);
      // clone's low byte is the exit signal, not flags: CLONE_NEWTIME (0x80) is for clone3 only.
      if (!mine || (c.syscall == std::string_view("clone") && (constant.value & 0xff) != 0))
        continue;
      const std::string text = value_text(c.syscall, c.arg, constant.value);
      EXPECT_EQ(text.find("0x"), std::string::npos) << c.syscall << " " << constant.name;
      // Without the baseline, which decides namespace flags and TIOCSTI before any rule.
      const LoadResult loaded =
          try_parse_policy("default allow\nkill " + std::string(c.syscall) + " if arg" +
                               std::to_string(c.arg) + " == " + text + "\n",
                           "names.policy", ".", Baseline::none);
      ASSERT_TRUE(loaded.policy.has_value()) << text << "\n" << format(loaded.diagnostics);
      const Policy& p = *loaded.policy;
      std::vector<std::uint64_t> args(6, 0);
      args[static_cast<std::size_t>(c.arg)] = constant.value;
      EXPECT_EQ(evaluate(p, call(*syscall_number(c.syscall), args)).where.line, 2)
          << c.syscall << " " << constant.name << " written as " << text;
    }
  }
  EXPECT_EQ(value_text("clone", 0, CLONE_VM | CLONE_VFORK | SIGCHLD),
            "CLONE_VM | CLONE_VFORK | SIGCHLD");
  EXPECT_EQ(value_text("openat", 2, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC),
            "O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC");
  EXPECT_EQ(value_text("ioctl", 1, 0x12345678), "0x12345678");  // no name: the number
  // Each bit once: not "SOCK_STREAM | SOCK_CLOEXEC | 0x80001".
  EXPECT_EQ(value_text("socket", 1, SOCK_STREAM | SOCK_CLOEXEC), "SOCK_STREAM | SOCK_CLOEXEC");
  EXPECT_EQ(value_text("socketpair", 1, SOCK_SEQPACKET), "SOCK_SEQPACKET");
  EXPECT_EQ(value_text("unshare", 0, CLONE_NEWUSER | CLONE_NEWNS), "CLONE_NEWNS | CLONE_NEWUSER");
  EXPECT_EQ(value_text("ptrace", 0, PTRACE_SEIZE), "PTRACE_SEIZE");
}

}  // namespace
}  // namespace jail::policy
