// jail export-oci's bundle under crun (issue 7). crun refuses a hybrid cgroup layout (v1
// controllers with a v2 hierarchy that has controllers of its own), which is this CI host's; the
// test shows that refusal, then runs the same bundle where the layout allows it: in a mount
// namespace of its own whose /sys/fs/cgroup has only the v1 hierarchies, with crun told to leave
// cgroups alone (the test creates none). Nothing of the host changes.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "run_jail.hpp"

namespace jail_test {
namespace {

// A v2 hierarchy mounted beside the v1 ones, with controllers enabled in it: what crun calls
// hybrid mode and refuses.
bool host_cgroups_are_hybrid() {
  const auto controllers = read_file("/sys/fs/cgroup/unified/cgroup.controllers");
  return controllers && !trim(*controllers).empty();
}

TEST(OciCrun, ExportedBundleRunsUnderCrun) {
  if (::geteuid() != 0) GTEST_FAIL() << "crun runs need root; this suite runs as root in CI";
  if (!std::filesystem::exists("/usr/bin/crun")) {
    GTEST_FAIL()
        << "crun is not installed; scripts/install-deps.sh installs the Debian package crun";
  }
  TempDir work;
  const std::string bundle = work / "bundle";
  RunResult exported = run_jail({"export-oci", "--bundle", bundle, "--no-cwd", "--", "sh", "-c",
                                 "echo exported; id -u; unshare -U true; echo after=$?"});
  ASSERT_EQ(exported.exit_code, 0) << describe(exported);
  const std::string state = work / "state";
  const std::string crun = "crun --root " + state + " --cgroup-manager=disabled";
  const std::string cleanup = "; " + crun + " delete -f jail-crun-test >/dev/null 2>&1";

  const std::string in_bundle = "cd " + bundle + " && ";
  std::string command = in_bundle + crun + " run jail-crun-test";
  const bool hybrid = host_cgroups_are_hybrid();
  if (hybrid) {
    const std::string refused = shell_output(command + cleanup);
    EXPECT_NE(refused.find("hybrid"), std::string::npos)
        << "crun was expected to refuse this host's hybrid cgroup layout; it said: " << refused;
    std::printf(
        "crun refuses this host's hybrid cgroups (\"%s\"); running the bundle in a mount namespace "
        "whose /sys/fs/cgroup has only the v1 hierarchies\n",
        trim(refused).c_str());
    command = "unshare --mount --propagation private sh -c 'umount /sys/fs/cgroup/unified && " +
              command + "'";
  }
  const std::string out = shell_output(command + cleanup);
  EXPECT_NE(out.find("exported\n1000\n"), std::string::npos) << out;
  // The policy went with the bundle: crun loaded it, and unshare died of it (128 + SIGSYS).
  EXPECT_NE(out.find("after=159"), std::string::npos) << out;
  // The unmount stayed in the test's own mount namespace.
  if (hybrid) {
    EXPECT_TRUE(host_cgroups_are_hybrid());
  }
}

}  // namespace
}  // namespace jail_test
