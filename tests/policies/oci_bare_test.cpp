// A profile read without the jail's baseline (Baseline::none), as the tests load Docker's
// default profile around jail: Docker's own decisions, with nothing of the baseline's added
// (its kill of namespace flags would not be Docker's EPERM) and none of Docker's left out (its
// clone3 ENOSYS, which the baseline otherwise decides).
#include <gtest/gtest.h>
#include <linux/audit.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>

#include <array>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "policy/evaluate.hpp"
#include "policy/oci.hpp"
#include "policy/policy.hpp"
#include "policy/syscalls.hpp"

namespace jail::policy {
namespace {

std::string docker_profile() {
  std::ifstream in(std::string(SECCOMP_FIXTURES_DIR) + "/docker-default.json");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string action(const Policy& policy, const char* name, std::array<std::uint64_t, 6> args = {}) {
  seccomp_data data{};
  data.nr = *syscall_number(name);
  data.arch = AUDIT_ARCH_X86_64;
  for (std::size_t i = 0; i < args.size(); ++i) data.args[i] = args[i];
  return to_string(evaluate(policy, data).action);
}

TEST(OciImportBare, DecidesAsDockerWithNothingOfTheBaseline) {
  ImportTarget target{"6.18.0", {"CAP_SYS_CHROOT"}};
  target.baseline = Baseline::none;
  const std::string text = import_oci_seccomp(docker_profile(), "docker-default.json", target);
  EXPECT_NE(text.find("Read without the jail's baseline"), std::string::npos) << text;
  EXPECT_NE(text.find("holding CAP_SYS_CHROOT."), std::string::npos) << text;
  EXPECT_NE(text.find("errno ENOSYS clone3\n"), std::string::npos) << text;

  const LoadResult bare = try_parse_policy(text, "docker.policy", ".", Baseline::none);
  ASSERT_TRUE(bare.policy.has_value()) << format(bare.diagnostics);
  const Policy& p = *bare.policy;
  EXPECT_EQ(action(p, "clone", {SIGCHLD}), "allow");
  EXPECT_EQ(action(p, "clone", {CLONE_NEWUSER | SIGCHLD}), "errno EPERM");
  EXPECT_EQ(action(p, "unshare", {CLONE_NEWUSER}), "errno EPERM");
  EXPECT_EQ(action(p, "clone3"), "errno ENOSYS");
  EXPECT_EQ(action(p, "chroot"), "allow");
  EXPECT_EQ(action(p, "pidfd_getfd"), "errno EPERM");  // needs CAP_SYS_PTRACE
  EXPECT_EQ(action(p, "ioctl", {0, TIOCSTI}), "allow");
  EXPECT_EQ(action(p, "io_uring_setup"), "errno EPERM");

  // The same text with the baseline in front is a jail's filter again.
  const LoadResult jailed = try_parse_policy(text, "docker.policy");
  ASSERT_TRUE(jailed.policy.has_value()) << format(jailed.diagnostics);
  EXPECT_EQ(action(*jailed.policy, "clone", {CLONE_NEWUSER | SIGCHLD}), "kill");
  EXPECT_EQ(action(*jailed.policy, "ioctl", {0, TIOCSTI}), "errno EPERM");
}

}  // namespace
}  // namespace jail::policy
