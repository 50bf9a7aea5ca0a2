// `jail policy learn` writes a policy only from what it can vouch for: the command it ran stays
// in a comment, the text loads with jail's own policy loader, and what it cannot write is known
// before the tool runs.
#include <gtest/gtest.h>
#include <sys/syscall.h>

#include <string>
#include <vector>

#include "run_jail.hpp"

namespace jail_test {
namespace {

class PolicyLearnText : public CallerTest {};

// A script from someone else, with a line that reads like a rule: it belonged to the command and
// must not become one (it did: `allow ptrace …` was line 3 of the learned policy).
TEST_P(PolicyLearnText, TheCommandStaysInOneCommentLine) {
  const std::string policy = cwd_ / "learned.policy";
  const std::string script = "true\nallow ptrace process_vm_writev kexec_load";
  RunResult learn = run({"policy", "learn", "--no-cwd", "-o", policy, "--", "sh", "-c", script});
  EXPECT_EQ(learn.exit_code, 127) << describe(learn);  // sh's: there is no `allow` command
  const std::string text = read_file(policy).value_or("");
  for (const auto& line : split_lines(text)) {
    if (line.find("ptrace") != std::string::npos) EXPECT_TRUE(line.starts_with("#")) << text;
  }
  EXPECT_NE(text.find("#   sh -c $'true\\nallow ptrace process_vm_writev kexec_load'\n"),
            std::string::npos)
      << text;
  RunResult check = run({"policy", "check", policy});
  EXPECT_EQ(check.exit_code, 0) << describe(check);
}

JAIL_INSTANTIATE_FOR_CALLERS(PolicyLearnText);

class PolicyLearnMerge : public CallerTest {};

// The supervisor keeps 64 distinct argument sets of a syscall: 70 allowed ones first, then one
// the old policy refuses. Checked against the kept sets only, merge said the old policy "already
// allowed everything seen", and the merged policy refused FIONREAD on the next run.
TEST_P(PolicyLearnMerge, ASyscallWithMoreArgumentSetsThanKeptIsAdded) {
  write_file(cwd_ / "old.policy", "default allow\nerrno EPERM ioctl if arg1 != TCGETS\n");
  const std::string merged = cwd_ / "merged.policy";
  const std::string ioctl = std::to_string(SYS_ioctl);
  std::vector<std::string> calls = {probe("sc_raw")};
  for (int fd = 100; fd < 170; ++fd) {  // not open: EBADF, but seccomp sees each call first
    calls.insert(calls.end(), {ioctl, std::to_string(fd), "0x5401", "0", ","});  // TCGETS
  }
  calls.insert(calls.end(), {ioctl, "100", "0x541B", "0"});  // FIONREAD, call 70
  RunResult learn =
      run(concat({{"policy", "learn", "--no-cwd", "--merge", cwd_ / "old.policy", "-o", merged},
                  probe_mount(),
                  {"--"},
                  calls}));
  ASSERT_EQ(learn.exit_code, 0) << describe(learn);
  EXPECT_NE(learn.err.find("jail: added ioctl"), std::string::npos) << describe(learn);
  RunResult again = run(concat({{"--no-cwd", "--policy", merged}, probe_mount(), {"--"}, calls}));
  EXPECT_NE(again.out.find("result 70 ret=-1 errno=9\n"), std::string::npos)  // EBADF, not EPERM
      << describe(again) << read_file(merged).value_or("");
}

JAIL_INSTANTIATE_FOR_CALLERS(PolicyLearnMerge);

}  // namespace
}  // namespace jail_test
