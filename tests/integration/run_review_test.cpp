// jail explain and jail diff end to end: the effective run with each field's origin, and the
// verdict on a profile change, as a security team's review reads them. Nothing is run.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/resource.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_jail.hpp"

namespace jail_test {
namespace {

// A scratch directory under /tmp, removed with what is in it.
class Scratch {
 public:
  Scratch() {
    std::string pattern = "/tmp/jail-test-review-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~Scratch() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  [[nodiscard]] std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The line of `text` that starts with `start`, or "" when none does.
std::string line_starting(const std::string& text, const std::string& start) {
  for (const std::string& line : split_lines(text)) {
    if (line.starts_with(start)) return line;
  }
  return "";
}

TEST(RunExplain, NamesWhereEachFieldCameFrom) {
  Scratch work;
  const std::string profile = work / "p.toml";
  write_file(profile, "hostname = \"team\"\nmemory = \"512M\"\n");
  RunResult r = run_jail({"explain", "--profile", profile, "--memory", "1G", "--", "true"},
                         {.cwd = work.path()});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(line_starting(r.out, "limits.memory ").find("[command line]"), std::string::npos)
      << r.out;
  EXPECT_NE(line_starting(r.out, "hostname ").find("team  [profile " + profile + ":1:1]"),
            std::string::npos)
      << r.out;
  EXPECT_NE(line_starting(r.out, "limits.pids ").find("[default]"), std::string::npos) << r.out;

  RunResult j = run_jail(
      {"explain", "--profile", profile, "--memory", "1G", "--format", "json", "--", "true"},
      {.cwd = work.path()});
  ASSERT_EQ(j.exit_code, 0) << describe(j);
  const nlohmann::json fields = nlohmann::json::parse(j.out).at("fields");
  EXPECT_EQ(fields.at("limits.memory").at("origin"), "command line");
  EXPECT_EQ(fields.at("limits.memory").at("value"), 1u << 30);
  EXPECT_EQ(fields.at("hostname").at("origin"), "profile " + profile + ":1:1");
  EXPECT_EQ(fields.at("hostname").at("value"), "team");
  EXPECT_EQ(fields.at("limits.pids").at("origin"), "default");
  EXPECT_TRUE(fields.at("limits.pids").at("value").is_null());
  EXPECT_EQ(fields.at("argv").at("value"), nlohmann::json::array({"true"}));
}

TEST(RunExplain, ABadFlagIsTheRunsUsageFailure) {
  Scratch work;
  RunResult r = run_jail({"explain", "--memory", "lots"}, {.cwd = work.path()});
  EXPECT_EQ(r.exit_code, 125) << describe(r);
  EXPECT_NE(r.err.find("--memory 'lots'"), std::string::npos) << describe(r);
  EXPECT_EQ(r.out, "");
}

std::string read_only_bind(const std::string& source) {
  return "ro-bind = [\"" + source + ":/data\"]\n";
}

// Two profiles side by side in one scratch directory, compared both ways.
class RunDiff : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(work_ / "data/.git");
    std::filesystem::create_directory(work_ / "other");
  }

  RunResult diff(const std::string& before, const std::string& after,
                 const std::vector<std::string>& extra = {}) {
    write_file(work_ / "a.toml", before);
    write_file(work_ / "b.toml", after);
    return run_jail(concat({{"diff", work_ / "a.toml", work_ / "b.toml"}, extra}),
                    {.cwd = work_.path()});
  }

  // From `narrow` to `wide` is wider in `field` (exit 1); the way back narrower (exit 0).
  void expect_wider_then_narrower(const std::string& narrow, const std::string& wide,
                                  const std::string& field) {
    RunResult widened = diff(narrow, wide);
    EXPECT_EQ(widened.exit_code, 1) << describe(widened);
    EXPECT_NE(line_starting(widened.out, "wider    " + field + ":"), "") << describe(widened);
    RunResult narrowed = diff(wide, narrow);
    EXPECT_EQ(narrowed.exit_code, 0) << describe(narrowed);
    EXPECT_NE(line_starting(narrowed.out, "narrower " + field + ":"), "") << describe(narrowed);
  }

  Scratch work_;
};

TEST_F(RunDiff, ANewWritableBindIsWider) {
  expect_wider_then_narrower("", "bind = [\"data:/data\"]\n", "mounts[/data]");
}

TEST_F(RunDiff, AReadOnlyBindMadeWritableIsWider) {
  expect_wider_then_narrower("ro-bind = [\"data:/data\"]\n", "bind = [\"data:/data\"]\n",
                             "mounts[/data]");
}

TEST_F(RunDiff, DroppingAProtectedPathIsWider) {
  // The files under .git are writable through the bind of data again.
  expect_wider_then_narrower("bind = [\"data:/data\"]\nprotect = [\"data/.git\"]\n",
                             "bind = [\"data:/data\"]\n", "mounts[/data/.git]");
}

TEST_F(RunDiff, AnotherHostPathAtATargetIsWiderEitherWay) {
  for (const auto& [before, after] : {std::pair{"data", "other"}, std::pair{"other", "data"}}) {
    RunResult r = diff(read_only_bind(before), read_only_bind(after));
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    EXPECT_NE(line_starting(r.out, "wider    mounts[/data]:"), "") << describe(r);
  }
}

TEST_F(RunDiff, NestedMountsInTheOtherOrderAreWiderEitherWay) {
  // Mounts apply in order: a bind of data at /w after the read-only .git below it covers that, and
  // the tool writes the host's data/.git. Each target keeps its mount; only the order moved.
  const std::string outer = "bind = [\"data:/w\"]\n";
  const std::string read_only = "ro-bind = [\"data/.git:/w/.git\"]\n";
  const std::string tmpfs = "tmpfs = [\"/w/.git\"]\n";
  const std::string protect = "protect = [\"data/.git\"]\n";  // a ro-bind after every mount
  const std::pair<std::string, std::string> cases[] = {
      {outer + read_only, read_only + outer},
      {read_only + outer, outer + read_only},
      {"bind = [\"data:/w\", \"data/.git:/w/.git\"]\n",
       "bind = [\"data/.git:/w/.git\", \"data:/w\"]\n"},
      {outer + tmpfs, tmpfs + outer},
      {outer + protect, read_only + outer},
  };
  for (const auto& [before, after] : cases) {
    RunResult r = diff(before, after);
    EXPECT_EQ(r.exit_code, 1) << before << "->\n" << after << describe(r);
    const std::string line = line_starting(r.out, "wider    mounts.order:");
    EXPECT_NE(line.find("\"/w\""), std::string::npos) << describe(r);
    EXPECT_NE(line.find("\"/w/.git\""), std::string::npos) << describe(r);
  }
  // Targets apart from each other cover nothing of each other, whatever their order.
  RunResult apart =
      diff(outer + "ro-bind = [\"other:/v\"]\n", "ro-bind = [\"other:/v\"]\n" + outer);
  EXPECT_EQ(apart.exit_code, 0) << describe(apart);
  EXPECT_EQ(apart.out, "") << describe(apart);
}

TEST_F(RunDiff, TheHostNetworkIsWider) {
  expect_wider_then_narrower("", "net = \"host\"\n", "net");
}

TEST_F(RunDiff, ALargerMemoryLimitIsWider) {
  expect_wider_then_narrower("memory = \"512M\"\n", "memory = \"1G\"\n", "limits.memory");
  expect_wider_then_narrower("memory = \"512M\"\n", "", "limits.memory");  // gone: unlimited
}

// An rlimit no entry sets is jail's default or the caller's own, never "unlimited".
TEST_F(RunDiff, AnRlimitIsComparedWithWhatTheRunWouldHaveWithoutIt) {
  // jail sets core to 0 unless core dumps are asked for.
  expect_wider_then_narrower("", "rlimit = [\"core=unlimited\"]\n", "limits.rlimits[core].soft");
  RunResult core = diff("", "rlimit = [\"core=unlimited\"]\n", {"--format", "json"});
  ASSERT_EQ(core.exit_code, 1) << describe(core);
  const nlohmann::json change = nlohmann::json::parse(core.out).at("changes").at(0);
  EXPECT_EQ(change.at("field"), "limits.rlimits[core].soft");
  EXPECT_EQ(change.at("before"), 0);
  EXPECT_EQ(change.at("after"), "unlimited");
  EXPECT_NE(change.at("why").get<std::string>().find("jail's default"), std::string::npos)
      << core.out;

  // jail gives the tool a quarter of the caller's msgqueue; the caller's whole is more. jail diff
  // runs with this test's limits, as a run would.
  rlimit own{};
  ASSERT_EQ(::getrlimit(RLIMIT_MSGQUEUE, &own), 0);
  if (own.rlim_cur != RLIM_INFINITY && own.rlim_cur >= 4) {
    expect_wider_then_narrower("", "rlimit = [\"msgqueue=" + std::to_string(own.rlim_cur) + "\"]\n",
                               "limits.rlimits[msgqueue].soft");
  }

  // Others the tool inherits from the caller.
  ASSERT_EQ(::getrlimit(RLIMIT_STACK, &own), 0);
  if (own.rlim_cur != RLIM_INFINITY) {
    expect_wider_then_narrower("", "rlimit = [\"stack=unlimited\"]\n",
                               "limits.rlimits[stack].soft");
    RunResult stack = diff("", "rlimit = [\"stack=unlimited\"]\n");
    EXPECT_NE(line_starting(stack.out, "wider    limits.rlimits[stack].soft:").find("the caller's"),
              std::string::npos)
        << describe(stack);
  }
}

TEST_F(RunDiff, AShippedPolicyNarrowerThanTheDefaultIsNarrower) {
  for (const char* name : {"python", "minimal"}) {
    expect_wider_then_narrower("policy = \"" + std::string(name) + "\"\n", "policy = \"default\"\n",
                               "policy");
  }
}

TEST_F(RunDiff, IdenticalProfilesMakeNoDifference) {
  const std::string profile = "memory = \"1G\"\nbind = [\"data:/data\"]\nnet = \"host\"\n";
  RunResult r = diff(profile, profile);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("no difference"), std::string::npos) << describe(r);
}

TEST_F(RunDiff, JsonNamesTheFieldAndBothValues) {
  RunResult r = diff("memory = \"512M\"\n", "memory = \"1G\"\n", {"--format", "json"});
  ASSERT_EQ(r.exit_code, 1) << describe(r);
  const nlohmann::json out = nlohmann::json::parse(r.out);
  EXPECT_TRUE(out.at("wider").get<bool>());
  ASSERT_EQ(out.at("changes").size(), 1u) << r.out;
  const nlohmann::json& change = out.at("changes").at(0);
  EXPECT_EQ(change.at("field"), "limits.memory");
  EXPECT_EQ(change.at("change"), "wider");
  EXPECT_EQ(change.at("before"), 512u << 20);
  EXPECT_EQ(change.at("after"), 1u << 30);
}

TEST_F(RunDiff, AProfileThatCannotBeReadExitsTwoWithTheReason) {
  write_file(work_ / "a.toml", "");
  RunResult missing =
      run_jail({"diff", work_ / "a.toml", work_ / "nowhere.toml"}, {.cwd = work_.path()});
  EXPECT_EQ(missing.exit_code, 2) << describe(missing);
  EXPECT_NE(missing.err.find(work_ / "nowhere.toml" + ": no such file"), std::string::npos)
      << describe(missing);

  RunResult broken = diff("", "memroy = \"1G\"\n");
  EXPECT_EQ(broken.exit_code, 2) << describe(broken);
  EXPECT_NE(broken.err.find("b.toml:1:1: unknown key 'memroy'"), std::string::npos)
      << describe(broken);

  RunResult policy = diff("", "policy = \"nowhere.policy\"\n");
  EXPECT_EQ(policy.exit_code, 2) << describe(policy);
  EXPECT_NE(policy.err.find("nowhere.policy"), std::string::npos) << describe(policy);
}

}  // namespace
}  // namespace jail_test
