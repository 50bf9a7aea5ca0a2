// --profile FILE: the TOML loader's checks and how its settings combine with the command line.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "profile.hpp"
#include "refusal.hpp"
#include "run_options.hpp"

namespace jail::runner {
namespace {

class ProfileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/jail-test-profile-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& body, const std::string& name = "p.toml") {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << body;
    return path;
  }
  // The UsageError's message, or "" when the profile loaded.
  std::string error_of(const std::string& body) {
    try {
      (void)load_profile(write(body));
    } catch (const UsageError& e) {
      return e.what();
    }
    return "";
  }
  std::string dir_;
};

std::vector<std::string> words(const Profile& p) {
  std::vector<std::string> out;
  for (const auto& s : p.settings) out.push_back(s.value ? s.flag + "=" + *s.value : s.flag);
  return out;
}

TEST_F(ProfileTest, KeysAreFlagNamesAndValuesBecomeFlagText) {
  std::string path = write(
      "memory = \"512M\"\nmax-output = 1048576\npids = 64\ncpus = 0.5\ntimeout = \"30s\"\n"
      "no-cwd = true\nquiet = false\nverbose = 2\nnet = \"host\"\npolicy = \"python\"\n"
      "ro-bind = [\"data:/data\", \"/usr/share\"]\n[env]\nLANG = \"C.UTF-8\"\n");
  Profile p = load_profile(path);
  EXPECT_EQ(p.file, path);
  EXPECT_EQ(words(p), (std::vector<std::string>{
                          "--memory=512M", "--max-output=1048576", "--pids=64", "--cpus=0.5",
                          "--timeout=30s", "--no-cwd", "--verbose", "--verbose", "--net=host",
                          "--policy=python", "--ro-bind=" + dir_ + "/data:/data",
                          "--ro-bind=/usr/share", "--env=LANG=C.UTF-8"}));
  EXPECT_EQ(p.settings[0].where, path + ":1:1");
  // Array elements carry their own column.
  EXPECT_EQ(p.settings[10].where, path + ":11:12");
}

TEST_F(ProfileTest, RelativePathsAreTheProfilesDirectorys) {
  Profile p = load_profile(
      write("policy = \"team.policy\"\naudit-log = \"logs/audit.jsonl\"\nrootfs = \"/srv/root\"\n"
            "bind = [\"../out\"]\n"));
  const std::string parent = std::filesystem::path(dir_).parent_path().string();
  EXPECT_EQ(words(p),
            (std::vector<std::string>{"--policy=" + dir_ + "/team.policy",
                                      "--audit-log=" + dir_ + "/logs/audit.jsonl",
                                      "--rootfs=/srv/root", "--bind=" + parent + "/out"}));
}

TEST_F(ProfileTest, EveryMistakeIsReportedWithItsPlace) {
  std::string path = dir_ + "/p.toml";
  std::string e = error_of(
      "memroy = \"512M\"\npids = \"many\"\nbind = \"/a\"\nnet = \"internet\"\n"
      "timeout = \"soon\"\nstatus-fd = 3\nro_bind = [1]\n[env]\nX = 1\n");
  EXPECT_NE(e.find(path + ":1:1: unknown key 'memroy' (did you mean 'memory'?)"), std::string::npos)
      << e;
  EXPECT_NE(e.find(path + ":2:8: 'pids' must be a non-negative integer, not a string"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find(path + ":3:8: 'bind' must be an array of strings"), std::string::npos) << e;
  EXPECT_NE(e.find(path + ":4:7: 'net' must be one of \"none\", \"host\""), std::string::npos) << e;
  EXPECT_NE(e.find(path + ":5:11: 'timeout' = \"soon\" is not a duration; write it like"),
            std::string::npos)
      << e;
  // Descriptors belong to one invocation, not to a profile.
  EXPECT_NE(e.find(path + ":6:1: 'status-fd' is for the command line only"), std::string::npos)
      << e;
  EXPECT_NE(e.find(path + ":7:1: unknown key 'ro_bind' (did you mean 'ro-bind'?)"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find(path + ":9:5: env.X must be a string, not an integer"), std::string::npos) << e;
  EXPECT_EQ(std::count(e.begin(), e.end(), '\n'), 7) << e;  // eight errors, one a line
}

TEST_F(ProfileTest, TomlSyntaxErrorsAndUnreadableFiles) {
  std::string e = error_of("memory = \"512M\nbind = [\n");
  EXPECT_NE(e.find(dir_ + "/p.toml:1:"), std::string::npos) << e;
  EXPECT_NE(e.find("not valid TOML"), std::string::npos) << e;
  EXPECT_THROW((void)load_profile(dir_ + "/nosuch.toml"), UsageError);
  EXPECT_THROW((void)load_profile(dir_), UsageError);
  EXPECT_EQ(error_of(""), "");  // an empty profile sets nothing
}

TEST_F(ProfileTest, CommandLineOverridesTheProfileAndListsAddUp) {
  std::filesystem::create_directory(dir_ + "/data");
  std::string path = write(
      "memory = \"512M\"\nhostname = \"from-profile\"\ntimeout = \"30s\"\n"
      "ro-bind = [\"data:/data\"]\ntmpfs = [\"/cache:8M\"]\n"
      "[env]\nA = \"profile\"\nB = \"profile\"\n");
  RunOptions run = parse_run_options(
      {"--profile", path, "--memory", "1G", "--env", "B=cli", "--tmpfs", "/late", "--no-cwd"},
      {"true"});
  const Spec& spec = run.spec;
  EXPECT_EQ(spec.limits.memory_bytes, std::uint64_t{1} << 30);  // the command line's
  EXPECT_EQ(spec.hostname, "from-profile");
  EXPECT_EQ(spec.limits.timeout, std::chrono::milliseconds(30000));
  ASSERT_EQ(spec.mounts.size(), 3u);
  EXPECT_EQ(spec.mounts[0].source, dir_ + "/data");
  EXPECT_EQ(spec.mounts[0].target, "/data");
  EXPECT_NE(spec.mounts[0].origin.find("in profile " + path + ":4:"), std::string::npos)
      << spec.mounts[0].origin;
  EXPECT_NE(spec.mounts[1].origin.find("in profile " + path + ":5:"), std::string::npos);
  EXPECT_EQ(spec.mounts[2].target, "/late");
  EXPECT_NE(spec.mounts[2].origin.find("on the command line"), std::string::npos);
  auto has = [&](const std::string& entry) {
    return std::find(spec.env.begin(), spec.env.end(), entry) != spec.env.end();
  };
  EXPECT_TRUE(has("A=profile"));
  EXPECT_TRUE(has("B=cli"));
  EXPECT_FALSE(has("B=profile"));
}

TEST_F(ProfileTest, ValuesThatLookLikeFlagsStayValues) {
  std::string path = write("hostname = \"--net=host\"\n");
  RunOptions run = parse_run_options({"--profile", path, "--no-cwd"}, {"true"});
  EXPECT_EQ(run.spec.hostname, "--net=host");
  EXPECT_EQ(run.spec.net, Net::none);
  EXPECT_THROW((void)parse_run_options({"--profile", dir_ + "/nosuch.toml"}, {"true"}), UsageError);
}

// "memory = 64" passed the profile's own checks (a positive number of bytes) and was then refused
// as "--memory 64", with no word of the profile.
TEST_F(ProfileTest, AValueRefusedAfterTheProfileLoadedNamesItsLine) {
  const std::string path = write("hostname = \"box\"\nmemory = 64\n");
  const std::string e = refusal_of({"--no-cwd", "--profile", path});
  EXPECT_TRUE(contains(e, "--memory 64: too little")) << e;
  EXPECT_TRUE(contains(e, "(in profile " + path + ":2:1)")) << e;
  // The same value on the command line is the command line's.
  const std::string own = refusal_of({"--no-cwd", "--profile", path, "--memory", "64"});
  EXPECT_TRUE(contains(own, "--memory 64: too little")) << own;
  EXPECT_FALSE(contains(own, "in profile")) << own;
}

// The command line changing a profile's mount is what profiles are for: no warning for it.
TEST_F(ProfileTest, TheCommandLineMayMountOverAProfilesMountUnwarned) {
  const std::string path = write("ro-bind = [\"/etc:/data\"]\n");
  EXPECT_TRUE(parse_run_options({"--no-cwd", "--profile", path, "--bind", "/srv:/data"}, {"true"})
                  .log.warnings.empty());
}

}  // namespace
}  // namespace jail::runner
