// What the tool could learn of or do to what jail runs around it: its init's limits (the same
// uid, so prlimit would have been allowed) and the host's name for its cgroup.
#include <gtest/gtest.h>

#include <string>

#include "run_jail.hpp"

namespace jail_test {
namespace {

class InitReach : public CallerTest {};

TEST_P(InitReach, TheToolCannotLowerItsInitsLimits) {
  const RunResult r =
      run({"--", "python3", "-c",
           "import resource\n"
           "before = open('/proc/1/limits').read()\n"
           "try:\n"
           "    resource.prlimit(1, resource.RLIMIT_NOFILE, (4, 4)); print('lowered')\n"
           "except OSError as e: print('refused', e.errno)\n"
           "print('same' if open('/proc/1/limits').read() == before else 'changed')\n"
           "resource.prlimit(0, resource.RLIMIT_NOFILE, (64, 64))\n"
           "print('own', resource.getrlimit(resource.RLIMIT_NOFILE)[0])\n"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "refused 1\nsame\nown 64\n") << describe(r);
}

TEST_P(InitReach, TheCgroupNameShowsNothingOfTheHost) {
  // --pids makes a cgroup for a root caller; an unprivileged caller's run has none to show.
  const RunResult r = run({"--pids", "64", "--", "cat", "/proc/self/cgroup"});
  if (!as_root() && r.exit_code != 0) {
    std::printf("[ measured ] no delegated cgroup for an unprivileged caller here: %s\n",
                r.err.c_str());
    const RunResult plain = run({"--", "cat", "/proc/self/cgroup"});
    ASSERT_EQ(plain.exit_code, 0) << describe(plain);
    EXPECT_EQ(plain.out.find("jail-"), std::string::npos) << describe(plain);
    return;
  }
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out.find("jail-"), std::string::npos) << describe(r);
  for (const std::string& line : split_lines(r.out)) {
    EXPECT_TRUE(line.ends_with(":/")) << line << "\n" << describe(r);
  }
}

JAIL_INSTANTIATE_FOR_CALLERS(InitReach);

}  // namespace
}  // namespace jail_test
