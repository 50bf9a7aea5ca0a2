// `jail policy learn` writes a policy only from what it can vouch for: the command it ran stays
// in a comment, the text loads with jail's own policy loader, and what it cannot write is known
// before the tool runs.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace jail_test
