// --profile FILE end to end: a TOML profile sets the run, the command line overrides it, and a
// mistake in it stops the run before anything starts, pointing at the line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "run_jail.hpp"

namespace jail_test {
namespace {

class Profile : public CallerTest {};

TEST_P(Profile, SetsTheRunAndTheCommandLineOverridesIt) {
  TempDir work;
  std::filesystem::create_directory(work / "data");
  ASSERT_EQ(::chown((work / "data").c_str(), kNobodyUid, kNobodyGid), 0);
  write_file(work / "data/greeting", "hello from the profile's bind\n");
  write_file(work / "team.toml",
             "# the team's profile for small python tools\n"
             "policy = \"python\"\n"
             "hostname = \"profiled\"\n"
             "timeout = \"20s\"\n"
             "max-output = \"1M\"\n"
             "no-cwd = true\n"
             "ro-bind = [\"data:/data\"]\n"
             "[env]\n"
             "GREETING = \"from-profile\"\n"
             "OVERRIDDEN = \"from-profile\"\n");
  const std::vector<std::string> script = {
      "python3", "-c",
      "import os, socket; print(open('/data/greeting').read().strip()); "
      "print(socket.gethostname(), os.getcwd(), os.environ['GREETING'], os.environ['OVERRIDDEN'])"};

  RunResult r =
      run(concat({{"--profile", work / "team.toml", "--env", "OVERRIDDEN=cli", "--"}, script}),
          {.cwd = work.path()});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "hello from the profile's bind\nprofiled / from-profile cli\n");

  RunResult over =
      run(concat({{"--profile", work / "team.toml", "--hostname", "cli", "--"}, script}),
          {.cwd = work.path()});
  ASSERT_EQ(over.exit_code, 0) << describe(over);
  EXPECT_EQ(over.out, "hello from the profile's bind\ncli / from-profile from-profile\n");

  // The profile's policy is enforced: python.policy kills ptrace.
  RunResult ptrace = run({"--profile", work / "team.toml", "--", "python3", "-c",
                          "import ctypes; ctypes.CDLL(None).ptrace(0, 0, 0, 0)"},
                         {.cwd = work.path()});
  EXPECT_EQ(ptrace.exit_code, 159) << describe(ptrace);
}

TEST_P(Profile, MistakesStopTheRunWithTheirPlace) {
  TempDir work;
  const std::string file = work / "bad.toml";
  write_file(file, "hostname = \"x\"\nmemroy = \"1G\"\npids = \"many\"\n");
  RunResult r = run({"--profile", file, "--", "true"}, {.cwd = work.path()});
  EXPECT_EQ(r.exit_code, 125) << describe(r);
  EXPECT_NE(r.err.find(file + ":2:1: unknown key 'memroy' (did you mean 'memory'?)"),
            std::string::npos)
      << describe(r);
  EXPECT_NE(r.err.find(file + ":3:8: 'pids' must be a non-negative integer, not a string"),
            std::string::npos)
      << describe(r);

  // An empty string took the next word on the command line as its value ("argument not
  // expected: FILE"), and a number too large for an id lost its place ("could not convert").
  const std::string values = work / "values.toml";
  write_file(values, "hostname = \"\"\nbind = [\"\"]\nuid = 99999999999\n");
  RunResult v = run({"--profile", values, "--", "true"}, {.cwd = work.path()});
  EXPECT_EQ(v.exit_code, 125) << describe(v);
  for (const std::string& expected :
       {values + ":1:12: 'hostname' has an empty string", values + ":2:9: 'bind' has an empty",
        values + ":3:7: 'uid' = 99999999999 is out of range"}) {
    EXPECT_NE(v.err.find(expected), std::string::npos) << expected << "\n" << describe(v);
  }

  // A mount the profile asked for names the profile when it fails.
  const std::string missing = work / "missing.toml";
  write_file(missing, "ro-bind = [\"does-not-exist:/x\"]\n");
  RunResult m = run({"--profile", missing, "--no-cwd", "--", "true"}, {.cwd = work.path()});
  EXPECT_EQ(m.exit_code, 125) << describe(m);
  EXPECT_NE(m.err.find("in profile " + missing + ":1:"), std::string::npos) << describe(m);
}

// The command line's word for a variable wins over the profile's, whichever flag says it: a
// --pass-env lost to the profile's [env] (all --pass-env applied first, then all --env).
TEST_P(Profile, TheCommandLinesPassEnvWinsOverTheProfilesEnv) {
  TempDir work;
  const std::string file = work / "p.toml";
  write_file(file, "no-cwd = true\n[env]\nJAIL_ITEST_A = \"from-profile\"\n");
  RunResult r =
      run({"--profile", file, "--pass-env", "JAIL_ITEST_A", "--", "sh", "-c", "echo $JAIL_ITEST_A"},
          {.cwd = work.path(), .extra_env = {"JAIL_ITEST_A=from-caller"}});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "from-caller\n") << describe(r);
}

// Every run flag but the caller's own descriptors has its key: dry-run, session-dir and
// trace-timing were "unknown"; status-fd says why it is not one.
TEST_P(Profile, DryRunSessionDirAndTraceTimingAreKeys) {
  TempDir work;
  const std::string file = work / "p.toml";
  write_file(file,
             "no-cwd = true\ndry-run = true\nsession-dir = \"sessions\"\n"
             "trace-timing = true\n");
  RunResult r = run({"--profile", file, "--", "true"}, {.cwd = work.path()});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.err.find("dry run: the host is unchanged"), std::string::npos) << describe(r);
  EXPECT_TRUE(std::filesystem::is_directory(work / "sessions")) << describe(r);

  write_file(file, "status-fd = 3\n");
  RunResult fd = run({"--profile", file, "--", "true"}, {.cwd = work.path()});
  EXPECT_EQ(fd.exit_code, 125) << describe(fd);
  EXPECT_NE(fd.err.find("'status-fd' is for the command line only"), std::string::npos)
      << describe(fd);
}

TEST_P(Profile, AMistakeIsReportedInTheProfilesStatusFile) {
  // A caller that reads the status file the profile names learns of a mistake in that same
  // profile, or on the command line, as it would of any other usage error.
  TempDir work;
  const std::string file = work / "p.toml";
  write_file(file, "status-file = \"status.json\"\nmemory = \"lots\"\n");
  RunResult r = run({"--profile", file, "--", "true"}, {.cwd = work.path()});
  EXPECT_EQ(r.exit_code, 125) << describe(r);
  const std::string status = read_file(work / "status.json").value_or("<missing>");
  EXPECT_NE(status.find("\"outcome\":\"setup_error\""), std::string::npos) << status;
  EXPECT_NE(status.find("'memory' = \\\"lots\\\" is not a size"), std::string::npos) << status;

  write_file(file, "status-file = \"status.json\"\n");
  RunResult cli = run({"--profile=" + file, "--pids", "-1", "--", "true"}, {.cwd = work.path()});
  EXPECT_EQ(cli.exit_code, 125) << describe(cli);
  const std::string again = read_file(work / "status.json").value_or("<missing>");
  EXPECT_NE(again.find("--pids"), std::string::npos) << again;
}

JAIL_INSTANTIATE_FOR_CALLERS(Profile);

}  // namespace
}  // namespace jail_test
