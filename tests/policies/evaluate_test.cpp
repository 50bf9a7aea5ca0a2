// The evaluator: first match in file order, includes expanded in place, the default otherwise,
// and the deciding file:line reported. The kernel tests check the filter agrees with it.
#include <gtest/gtest.h>
#include <linux/audit.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include <filesystem>
#include <fstream>

#include "policy/evaluate.hpp"
#include "policy/syscalls.hpp"
#include "policy_cli.hpp"

namespace jail::policy {
namespace {

using policy_test::call;

TEST(Evaluate, FirstMatchingRuleDecidesAndNamesItsLine) {
  Policy p = parse_policy(
      "default errno EPERM\n"
      "errno EACCES getppid if arg0 == 1\n"
      "kill getppid if arg0 == 1 || arg0 == 2\n"
      "log getppid if arg0 < 10\n"
      "allow getppid\n"
      "trap getpid\n",
      "t.policy");
  auto d = evaluate(p, call(SYS_getppid, {1}));
  EXPECT_EQ(d.action, (Action{ActionKind::errno_code, EACCES}));
  EXPECT_EQ(d.where.line, 2);
  EXPECT_FALSE(d.by_default);
  EXPECT_EQ(evaluate(p, call(SYS_getppid, {2})).action.kind, ActionKind::kill);
  EXPECT_EQ(evaluate(p, call(SYS_getppid, {2})).where.line, 3);
  EXPECT_EQ(evaluate(p, call(SYS_getppid, {9})).action.kind, ActionKind::log);
  EXPECT_EQ(evaluate(p, call(SYS_getppid, {10})).action.kind, ActionKind::allow);
  EXPECT_EQ(evaluate(p, call(SYS_getppid, {10})).where.line, 5);
  EXPECT_EQ(evaluate(p, call(SYS_getpid)).action.kind, ActionKind::trap);
  auto def = evaluate(p, call(SYS_read));
  EXPECT_TRUE(def.by_default);
  EXPECT_EQ(def.action, (Action{ActionKind::errno_code, EPERM}));
  EXPECT_EQ(def.where.line, 1);
}

TEST(Evaluate, ComparesAllSixtyFourBitsUnsigned) {
  Policy p = parse_policy(
      "default allow\n"
      "errno 1 getppid if arg0 == 0x100000005\n"
      "errno 2 getppid if arg1 > 0xffffffff\n"
      "errno 3 getppid if (arg2 & 0xff00000000) == 0x1200000000\n",
      "t.policy");
  EXPECT_EQ(evaluate(p, call(SYS_getppid, {0x100000005})).action.errno_value, 1);
  EXPECT_EQ(evaluate(p, call(SYS_getppid, {5})).action.kind, ActionKind::allow);
  EXPECT_EQ(evaluate(p, call(SYS_getppid, {0, 0x100000000})).action.errno_value, 2);
  EXPECT_EQ(evaluate(p, call(SYS_getppid, {0, 0xffffffff})).action.kind, ActionKind::allow);
  EXPECT_EQ(evaluate(p, call(SYS_getppid, {0, 0, 0x12ffffffff})).action.errno_value, 3);
  EXPECT_EQ(evaluate(p, call(SYS_getppid, {0, 0, 0x13ffffffff})).action.kind, ActionKind::allow);
}

TEST(Evaluate, IoctlRequestIsComparedOnItsLowHalf) {
  Policy p = parse_policy("default allow\n", "t.policy");
  // The baseline refuses TIOCSTI whatever the high bits say, as the kernel ignores them.
  auto plain = evaluate(p, call(SYS_ioctl, {0, TIOCSTI}));
  auto high = evaluate(p, call(SYS_ioctl, {0, TIOCSTI | (1ULL << 32)}));
  EXPECT_EQ(plain.action, (Action{ActionKind::errno_code, EPERM}));
  EXPECT_EQ(high.action, plain.action);
  EXPECT_EQ(high.where.file, "baseline.policy");
  EXPECT_EQ(evaluate(p, call(SYS_ioctl, {0, TCGETS | (1ULL << 32)})).action.kind,
            ActionKind::allow);
}

TEST(Evaluate, ForeignArchitecturesAndX32AreKilled) {
  Policy p = parse_policy("default allow\n", "t.policy");
  auto i386 = call(SYS_getppid);
  i386.arch = AUDIT_ARCH_I386;
  EXPECT_EQ(evaluate(p, i386).action.kind, ActionKind::kill);
  auto x32 = call(SYS_getppid | 0x40000000);
  EXPECT_EQ(evaluate(p, x32).action.kind, ActionKind::kill);
  EXPECT_EQ(evaluate(p, call(SYS_getppid)).action.kind, ActionKind::allow);
}

TEST(Evaluate, BaselineComesBeforeEveryPolicy) {
  Policy p = parse_policy("default allow\nallow clone3 clone unshare\n", "t.policy");
  EXPECT_EQ(evaluate(p, call(SYS_clone3)).action, (Action{ActionKind::errno_code, ENOSYS}));
  EXPECT_TRUE(evaluate(p, call(SYS_clone3)).action.quiet) << "every thread meets it: not reported";
  EXPECT_EQ(evaluate(p, call(SYS_clone, {CLONE_NEWUSER})).action.kind, ActionKind::kill);
  EXPECT_EQ(evaluate(p, call(SYS_clone, {CLONE_VM | CLONE_THREAD})).action.kind, ActionKind::allow);
  EXPECT_EQ(evaluate(p, call(SYS_unshare, {CLONE_NEWNET})).action.kind, ActionKind::kill);
  EXPECT_EQ(
      evaluate(p, call(SYS_seccomp, {SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER}))
          .action.kind,
      ActionKind::errno_code);
  EXPECT_EQ(evaluate(p, call(SYS_seccomp, {SECCOMP_SET_MODE_FILTER, 0})).action.kind,
            ActionKind::allow);
}

class Includes : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("policy-include-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_ / "sub");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  std::filesystem::path dir_;
};

TEST_F(Includes, ExpandInPlaceRelativeToTheIncludingFile) {
  write("sub/inner.policy", "errno EACCES getppid if arg0 == 1\nallow getpid\n");
  write("sub/middle.policy", "include \"inner.policy\"\nkill getppid\n");
  std::string top = write("top.policy",
                          "default errno EPERM\nerrno ENOENT getppid if arg0 == 2\n"
                          "include \"sub/middle.policy\"\nallow getppid\n");
  Policy p = load_policy(top);
  EXPECT_EQ(evaluate(p, call(SYS_getppid, {2})).action.errno_value, ENOENT);
  auto inner = evaluate(p, call(SYS_getppid, {1}));
  EXPECT_EQ(inner.action.errno_value, EACCES);
  EXPECT_EQ(inner.where.file, (dir_ / "sub/inner.policy").string());
  EXPECT_EQ(inner.where.line, 1);
  // middle's unconditional kill comes before top's allow.
  EXPECT_EQ(evaluate(p, call(SYS_getppid, {3})).action.kind, ActionKind::kill);
  EXPECT_EQ(evaluate(p, call(SYS_getpid)).action.kind, ActionKind::allow);
}

TEST_F(Includes, ShippedPolicyByNameAndInheritedDefault) {
  std::string top = write("top.policy", "errno EACCES getppid\ninclude \"default\"\n");
  Policy p = load_policy(top);
  EXPECT_EQ(p.default_action, (Action{ActionKind::errno_code, EPERM}));
  EXPECT_EQ(p.default_where.file, "default.policy");
  EXPECT_EQ(evaluate(p, call(SYS_getppid)).action.errno_value, EACCES);
  EXPECT_EQ(evaluate(p, call(SYS_ptrace)).action.kind, ActionKind::kill);
}

TEST_F(Includes, CyclesDepthAndMissingFilesAreErrors) {
  write("a.policy", "default allow\ninclude \"b.policy\"\n");
  write("b.policy", "include \"a.policy\"\n");
  auto r = try_load_policy((dir_ / "a.policy").string());
  ASSERT_FALSE(r.policy);
  ASSERT_EQ(r.diagnostics.size(), 1u) << format(r.diagnostics);
  EXPECT_EQ(r.diagnostics[0].where.file, (dir_ / "b.policy").string());
  EXPECT_EQ(r.diagnostics[0].where.line, 1);
  EXPECT_EQ(r.diagnostics[0].where.column, 9);
  EXPECT_NE(r.diagnostics[0].message.find("include cycle: "), std::string::npos);

  for (int i = 0; i < 10; ++i)
    write("d" + std::to_string(i) + ".policy",
          "include \"d" + std::to_string(i + 1) + ".policy\"\n");
  write("d10.policy", "default allow\n");
  auto deep = try_load_policy((dir_ / "d0.policy").string());
  ASSERT_FALSE(deep.policy);
  ASSERT_EQ(deep.diagnostics.size(), 1u) << format(deep.diagnostics);
  EXPECT_EQ(deep.diagnostics[0].message, "includes nested deeper than 8 files");
  EXPECT_EQ(deep.diagnostics[0].where.file, (dir_ / "d8.policy").string());

  write("m.policy", "default allow\ninclude \"nothere.policy\"\ninclude \"defualt\"\n");
  auto missing = try_load_policy((dir_ / "m.policy").string());
  ASSERT_EQ(missing.diagnostics.size(), 2u) << format(missing.diagnostics);
  EXPECT_EQ(missing.diagnostics[0].message, "cannot read included file '" +
                                                (dir_ / "nothere.policy").string() +
                                                "': No such file or directory");
  // A directory read as a file was an empty policy, included without a word.
  std::filesystem::create_directory(dir_ / "adir");
  write("d.policy", "default allow\ninclude \"./adir\"\n");
  auto directory = try_load_policy((dir_ / "d.policy").string());
  ASSERT_EQ(directory.diagnostics.size(), 1u) << format(directory.diagnostics);
  EXPECT_EQ(directory.diagnostics[0].message, "cannot read included file '" +
                                                  (dir_ / "adir").string() +
                                                  "': it is a directory; give a file");
  EXPECT_EQ(missing.diagnostics[1].message,
            "unknown shipped policy 'defualt' (did you mean default?)");
}

TEST_F(Includes, ErrorsInEveryFileAreReportedTogether) {
  write("inner.policy", "allow raed\n");
  std::string top = write("top.policy",
                          "default errno EPERM\nallow wriet\ninclude \"inner.policy\"\n"
                          "allow ioctl if arg1 == TCGETZ\n");
  auto r = try_load_policy(top);
  ASSERT_FALSE(r.policy);
  ASSERT_EQ(r.diagnostics.size(), 3u) << format(r.diagnostics);
  EXPECT_EQ(r.diagnostics[0].where.file, top);
  EXPECT_EQ(r.diagnostics[0].where.line, 2);
  EXPECT_EQ(r.diagnostics[1].where.file, top);
  EXPECT_EQ(r.diagnostics[1].where.line, 4);
  EXPECT_EQ(r.diagnostics[2].where.file, (dir_ / "inner.policy").string());
  EXPECT_EQ(r.diagnostics[2].message, "unknown syscall 'raed' (did you mean read?)");
  EXPECT_EQ(r.diagnostics[2].source_line, "allow raed");
}

TEST(LoadPolicy, ShippedNamesAndUnknownNames) {
  auto names = shipped_policy_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "default"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "python"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "minimal"), names.end());
  EXPECT_EQ(std::find(names.begin(), names.end(), "baseline"), names.end());
  try {
    (void)load_policy("pyhton");
    FAIL() << "an unknown shipped name must throw";
  } catch (const PolicyError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("no shipped policy named 'pyhton' (did you mean python?)"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("default, minimal, python"), std::string::npos) << what;
  }
  EXPECT_THROW((void)load_policy("/nonexistent/x.policy"), PolicyError);
}

TEST(Syscalls, NamesAndNumbersRoundTrip) {
  EXPECT_EQ(syscall_number("read"), 0);
  EXPECT_EQ(syscall_number("clone3"), 435);
  EXPECT_EQ(syscall_number("mseal"), 462);  // newer than libseccomp 2.5.4's table
  EXPECT_EQ(syscall_name(SYS_ptrace), "ptrace");
  EXPECT_EQ(syscall_name(9999), "syscall_9999");
  EXPECT_FALSE(syscall_number("nosuch").has_value());
  EXPECT_TRUE(is_32bit_argument(SYS_ioctl, 1));
  EXPECT_FALSE(is_32bit_argument(SYS_ioctl, 2));
}

}  // namespace
}  // namespace jail::policy
