// `jail policy check|explain|bpf` through run_policy_command, as the runner calls it.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "policy/policy.hpp"
#include "policy_cli.hpp"
#include "policy_command.hpp"

namespace jail::runner {
namespace {

using policy_test::CliRun;

CliRun run(std::vector<std::string> words) {
  return policy_test::run_policy_cli(std::move(words));
}

std::string sample(const std::string& name) {
  return std::string(POLICY_SAMPLES_DIR) + "/" + name;
}

TEST(Cli, CheckPassesOnEveryShippedPolicy) {
  for (const auto& name : jail::policy::shipped_policy_names()) {
    CliRun r = run({"check", name});
    EXPECT_EQ(r.code, 0) << name << "\n" << r.err;
    EXPECT_EQ(r.out, name + ": ok\n");
    EXPECT_EQ(r.err, "");
    CliRun by_path = run({"check", std::string(POLICY_SHIPPED_DIR) + "/" + name + ".policy"});
    EXPECT_EQ(by_path.code, 0) << by_path.err;
  }
}

TEST(Cli, CheckReportsEveryErrorWithItsCaret) {
  std::string file = sample("broken_syntax.policy");
  CliRun r = run({"check", file});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, file + ": FAILED\n");
  EXPECT_EQ(r.err, file +
                       ":3:12: unknown syscall 'wirte' (did you mean write?)\n"
                       "allow read wirte\n"
                       "           ^\n" +
                       file +
                       ":4:33: unknown constant 'TIOCGWINZ' (did you mean TIOCGWINSZ?)\n"
                       "allow ioctl if arg1 in {TCGETS, TIOCGWINZ}\n"
                       "                                ^\n" +
                       file +
                       ":5:1: unknown action 'alow' (did you mean allow?)\n"
                       "alow close\n"
                       "^\n" +
                       file +
                       ":6:34: '=' is not an operator; use '==' to compare\n"
                       "allow mmap if (arg2 & PROT_EXEC) = 0\n"
                       "                                 ^\n");
}

TEST(Cli, CheckFailsOnLintErrorsAndIncludeCycles) {
  std::string file = sample("unjustified.policy");
  CliRun r = run({"check", file});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, file +
                       ":4:7: dangerous syscall 'ptrace' allowed without a justification "
                       "comment on the line above\nallow ptrace\n      ^\n");
  CliRun cycle = run({"check", sample("cycle_a.policy")});
  EXPECT_EQ(cycle.code, 1);
  EXPECT_NE(cycle.err.find("cycle_b.policy:2:9: include cycle: "), std::string::npos) << cycle.err;
  EXPECT_NE(cycle.err.find("\ninclude \"cycle_a.policy\"\n        ^\n"), std::string::npos)
      << cycle.err;
}

TEST(Cli, WarningsAreShownButDoNotFail) {
  CliRun r = run({"check", sample("warnings_only.policy")});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("ok (2 warnings)"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find(":4:13: warning: this rule for 'read' never applies"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(":5:7: warning: the condition can never hold"), std::string::npos) << r.err;
}

TEST(Cli, ExplainTextAndJson) {
  CliRun text = run({"explain", "default", "ptrace", "ioctl"});
  EXPECT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("ptrace"), std::string::npos);
  EXPECT_NE(text.out.find("kill"), std::string::npos);
  EXPECT_NE(text.out.find("default.policy:"), std::string::npos);
  CliRun json = run({"explain", "minimal", "read", "--format", "json"});
  ASSERT_EQ(json.code, 0) << json.err;
  auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["syscalls"][0]["syscall"], "read");
  EXPECT_EQ(j["syscalls"][0]["rules"][0]["action"], "allow");
  CliRun bad = run({"explain", "default", "reed"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("unknown syscall 'reed' (did you mean read?)"), std::string::npos);
}

TEST(Cli, BpfPrintsTheProgram) {
  CliRun r = run({"bpf", "minimal"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("instructions, routing direct"), std::string::npos);
  EXPECT_NE(r.out.find("ret  KILL_PROCESS"), std::string::npos);
  CliRun n = run({"bpf", "minimal", "--routing", "notify"});
  EXPECT_NE(n.out.find("ret  USER_NOTIF"), std::string::npos);
}

// Two policies that decide alike printed nothing, as a command that did nothing would. Said on
// stderr: the output stays empty for a script that tests it.
TEST(Cli, DiffOfPoliciesThatDecideAlikeSaysSo) {
  const CliRun same = run({"diff", "default", "default"});
  EXPECT_EQ(same.code, 0);
  EXPECT_EQ(same.out, "");
  EXPECT_EQ(same.err, "no differences: both decide every syscall alike\n");
}

TEST(Cli, UsageErrorsAndUnknownPolicies) {
  EXPECT_EQ(run({}).code, 2);
  EXPECT_EQ(run({"frobnicate"}).code, 2);
  CliRun r = run({"check", "nosuchpolicy"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("no shipped policy named 'nosuchpolicy'"), std::string::npos) << r.err;
}

// Only a regular file is a policy or a profile: a directory was read as an empty policy ("no
// 'default' line"), /dev/zero until memory ran out, and a FIFO with no writer forever.
TEST(Cli, APolicyOrProfileThatIsNoRegularFileIsRefusedAtOnce) {
  char dir[] = "/tmp/jail-test-policy-cli-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string fifo = std::string(dir) + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const char* command : {"check", "import"}) {
    const CliRun directory = run({command, std::string(dir) + "/"});
    EXPECT_EQ(directory.code, 1) << command;
    EXPECT_NE(directory.err.find("it is a directory; give a file"), std::string::npos)
        << directory.err;
    for (const std::string& special : {std::string("/dev/zero"), fifo}) {
      const CliRun r = run({command, special});
      EXPECT_EQ(r.code, 1) << command << " " << special;
      EXPECT_NE(r.err.find("it is not a regular file"), std::string::npos) << r.err;
    }
  }
  ::unlink(fifo.c_str());
  ::rmdir(dir);
}

}  // namespace
}  // namespace jail::runner
