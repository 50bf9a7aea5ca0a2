// jail-egress as jail starts it as root: it runs as --uid/--gid with no capabilities, no new
// privileges and a filter of its own, and refuses to run as root at all.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "egress_helper.hpp"

namespace jail::egress::test {
namespace {

std::map<std::string, std::string> status_of(pid_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/status");
  std::map<std::string, std::string> fields;
  std::string line;
  while (std::getline(file, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    fields[line.substr(0, colon)] = value;
  }
  return fields;
}

TEST(EgressHelper, RunsAsItsOwnUidWithoutCapabilitiesUnderItsFilter) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to start the helper as jail does";
  EgressHelper helper({"--uid", "65534", "--gid", "65534", "--allow", "example.com"});
  ASSERT_EQ(helper.next_line()["event"], "ready") << helper.error_output();
  const auto status = status_of(helper.pid());
  EXPECT_EQ(status.at("Uid"), "65534\t65534\t65534\t65534");
  EXPECT_EQ(status.at("Gid"), "65534\t65534\t65534\t65534");
  EXPECT_EQ(status.at("Groups"), "");
  EXPECT_EQ(status.at("CapEff"), "0000000000000000");
  EXPECT_EQ(status.at("CapPrm"), "0000000000000000");
  EXPECT_EQ(status.at("CapInh"), "0000000000000000");
  EXPECT_EQ(status.at("CapAmb"), "0000000000000000");
  EXPECT_EQ(status.at("CapBnd"), "0000000000000000");
  EXPECT_EQ(status.at("NoNewPrivs"), "1");
  EXPECT_EQ(status.at("Seccomp"), "2");
}

TEST(EgressHelper, RefusesToRunAsRootWithoutAnIdentity) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  EgressHelper helper({"--allow", "example.com"});
  const int status = helper.wait_exit(std::chrono::seconds(10));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 125);
  EXPECT_NE(helper.error_output().find("--uid and --gid"), std::string::npos);
}

TEST(EgressHelper, RefusesUidZero) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  EgressHelper helper({"--uid", "0", "--gid", "0", "--allow", "example.com"});
  const int status = helper.wait_exit(std::chrono::seconds(10));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 125);
  EXPECT_NE(helper.error_output().find("never run as root"), std::string::npos);
}

TEST(EgressHelper, RefusesABadEntryWithItsMessage) {
  EgressHelper helper({"--uid", "65534", "--gid", "65534", "--allow", "exa mple.com"});
  const int status = helper.wait_exit(std::chrono::seconds(10));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 125);
  EXPECT_NE(helper.error_output().find("--net-allow \"exa mple.com\": a host name holds only"),
            std::string::npos);
}

TEST(EgressHelper, ExitsWhenJailClosesTheReportSocket) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  EgressHelper helper({"--uid", "65534", "--gid", "65534", "--allow", "example.com"});
  ASSERT_EQ(helper.next_line()["event"], "ready");
  helper.close_report();
  const int status = helper.wait_exit(std::chrono::seconds(5));
  ASSERT_NE(status, -1) << "the helper outlived its report socket";
  EXPECT_TRUE(WIFEXITED(status)) << status;
}

}  // namespace
}  // namespace jail::egress::test
