// The current directory is bound by default, so a run from $HOME (or from a directory that holds
// it, /home) would show the tool ~/.ssh and every token there: refused, with what to do instead.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "run_jail.hpp"

namespace jail_test {
namespace {

class CwdHome : public CallerTest {};

TEST_P(CwdHome, HomeAndWhatHoldsItAreNotBoundByDefault) {
  TempDir base;
  const std::string home = base / "alice";
  std::filesystem::create_directories(home + "/.ssh");
  write_file(home + "/.ssh/id_ed25519", "PRIVATE KEY\n", 0600);
  RunOptions at_home;
  at_home.cwd = home;
  at_home.extra_env = {"HOME=" + home};
  const RunResult refused = run({"--", "cat", home + "/.ssh/id_ed25519"}, at_home);
  EXPECT_NE(refused.exit_code, 0) << describe(refused);
  EXPECT_EQ(refused.out.find("PRIVATE KEY"), std::string::npos) << describe(refused);
  EXPECT_NE(refused.err.find("the current directory " + home + " is your home directory"),
            std::string::npos)
      << describe(refused);
  EXPECT_NE(refused.err.find("--no-cwd"), std::string::npos) << describe(refused);

  RunOptions above = at_home;
  above.cwd = base.path();
  const RunResult holder = run({"--", "true"}, above);
  EXPECT_NE(holder.exit_code, 0) << describe(holder);
  EXPECT_NE(holder.err.find("contains your home directory " + home), std::string::npos)
      << describe(holder);

  // Left out, the run goes on without it.
  const RunResult without = run({"--no-cwd", "--", "cat", home + "/.ssh/id_ed25519"}, at_home);
  EXPECT_NE(without.exit_code, 0) << describe(without);
  EXPECT_EQ(without.out.find("PRIVATE KEY"), std::string::npos) << describe(without);
  EXPECT_NE(without.err.find("No such file"), std::string::npos) << describe(without);

  // A project below home is an ordinary current directory.
  std::filesystem::create_directories(home + "/project");
  RunOptions in_project = at_home;
  in_project.cwd = home + "/project";
  const RunResult project = run({"--", "pwd"}, in_project);
  EXPECT_EQ(project.exit_code, 0) << describe(project);
  EXPECT_EQ(project.out, home + "/project\n") << describe(project);
}

JAIL_INSTANTIATE_FOR_CALLERS(CwdHome);

}  // namespace
}  // namespace jail_test
