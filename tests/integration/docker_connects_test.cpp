// Under Docker's default profile (docker_profile.hpp) the supervisor may not take the tool's
// socket (pidfd_getfd needs CAP_SYS_PTRACE there), so it can make none of the tool's connects.
// A run that asks for them to succeed fails at setup, saying why; one that does not runs, and
// each connect refused for that reason is reported, not left to look like a network fault.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "docker_profile.hpp"
#include "host_socket.hpp"
#include "run_jail.hpp"

namespace jail_test {
namespace {

class DockerConnects : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string missing = docker_profile_missing(); !missing.empty())
      GTEST_SKIP() << missing;
    ASSERT_EQ(docker_profile_not_in_force(), "");
    options_.caller = Caller::unprivileged;
    options_.cwd = dir_.path();
    options_.extra_env = {"TMPDIR=" + dir_.path()};
    options_.wrapper = docker_profile_wrapper();
  }

  TempDir dir_;
  RunOptions options_;
};

TEST_F(DockerConnects, ARunThatNeedsThemFailsAndSaysWhy) {
  const std::string socket = dir_ / "allowed.sock";
  HostServer server(socket, SOCK_STREAM);
  ASSERT_TRUE(server.bound());
  for (const auto& [flag, value] :
       {std::pair<std::string, std::string>{"--net", "host"},
        std::pair<std::string, std::string>{"--allow-socket", socket}}) {
    const RunResult r = run_jail({flag, value, "--", "sh", "-c", "echo RAN"}, options_);
    EXPECT_EQ(r.exit_code, 125) << describe(r);
    EXPECT_EQ(r.out.find("RAN"), std::string::npos) << describe(r);
    EXPECT_NE(r.err.find("cannot give the tool " + flag), std::string::npos) << describe(r);
    EXPECT_NE(r.err.find("pidfd_getfd is refused here (EPERM)"), std::string::npos) << describe(r);
  }
}

TEST_F(DockerConnects, OthersRunAndEachRefusalIsReported) {
  const std::string socket = dir_ / "user.sock";
  HostServer server(socket, SOCK_STREAM);
  ASSERT_TRUE(server.bound());
  const std::string status = dir_ / "status.json";
  const RunResult r = run_jail({"--status-file", status, "--", "python3", "-c",
                                "import socket\n"
                                "s = socket.socket(socket.AF_UNIX)\n"
                                "try:\n"
                                "    s.connect('" +
                                    socket +
                                    "'); print('connected')\n"
                                    "except OSError as e:\n"
                                    "    print('refused', e.errno)\n"},
                               options_);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("refused 13"), std::string::npos) << describe(r);
  EXPECT_EQ(server.reached(), 0) << describe(r);
  EXPECT_NE(r.err.find("a connect the supervisor cannot make here"), std::string::npos)
      << describe(r);
  const auto json = nlohmann::json::parse(read_file(status).value_or("null"), nullptr, false);
  ASSERT_TRUE(json.is_object()) << describe(r);
  EXPECT_EQ(json["isolation"], "landlock") << json.dump(2);
  EXPECT_EQ(json["denials"]["count"], 1) << json.dump(2);
}

}  // namespace
}  // namespace jail_test
