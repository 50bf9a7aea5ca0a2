// Under Docker's default profile (docker_profile.hpp) on a kernel below Landlock ABI 6 (played
// with JAIL_LANDLOCK_ABI_MAX=4, Ubuntu 24.04's), the supervisor checks the tool's signals, but may
// not take the tool's descriptors (pidfd_getfd needs CAP_SYS_PTRACE there). A signal by pid to
// the tool's own child still goes; one through a pidfd can't be told apart, so it is refused,
// and the report says why instead of calling the child a process outside the jail.
#include <gtest/gtest.h>

#include <string>

#include "docker_profile.hpp"
#include "run_jail.hpp"

namespace jail_test {
namespace {

TEST(DockerSignals, APidfdSignalTheSupervisorCannotCheckIsRefusedAndSaid) {
  if (const std::string missing = docker_profile_missing(); !missing.empty())
    GTEST_SKIP() << missing;
  ASSERT_EQ(docker_profile_not_in_force(), "");
  TempDir dir;
  RunOptions options;
  options.caller = Caller::unprivileged;
  options.cwd = dir.path();
  options.extra_env = {"TMPDIR=" + dir.path(), "JAIL_LANDLOCK_ABI_MAX=4"};
  options.wrapper = docker_profile_wrapper();
  const RunResult r = run_jail(
      {"--", "python3", "-c",
       "import ctypes, os, signal, subprocess\n"
       "libc = ctypes.CDLL(None, use_errno=True)\n"
       "child = subprocess.Popen(['sleep', '30'])\n"
       "fd = os.pidfd_open(child.pid)\n"
       "print('pidfd', libc.syscall(424, fd, signal.SIGTERM, None, 0), ctypes.get_errno())\n"
       "os.kill(child.pid, signal.SIGTERM)\n"
       "print('kill', child.wait())\n"},
      options);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("pidfd -1 1"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("kill -15"), std::string::npos) << describe(r);
  EXPECT_NE(r.err.find("pidfd_send_signal of descriptor"), std::string::npos) << describe(r);
  EXPECT_NE(r.err.find("pidfd_getfd EPERM"), std::string::npos) << describe(r);
}

}  // namespace
}  // namespace jail_test
