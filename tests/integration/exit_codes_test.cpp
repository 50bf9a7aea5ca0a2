// Exit-code contract: the tool's own code; 128+n when it dies by signal n; 126 not executable;
// 127 not found (looked up on the PATH inside the jail, never the caller's).
#include <gtest/gtest.h>

#include "run_jail.hpp"

namespace jail_test {
namespace {

class ExitCodes : public CallerTest {};

TEST_P(ExitCodes, SuccessIsZero) {
  RunResult r = run({"--", "true"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
}

TEST_P(ExitCodes, RunSubcommandIsTheSame) {
  RunResult r = run({"run", "--", "sh", "-c", "exit 3"});
  EXPECT_EQ(r.exit_code, 3) << describe(r);
}

TEST_P(ExitCodes, ToolsOwnCodeComesBack) {
  for (int code : {1, 3, 42, 255}) {
    RunResult r = run({"--", "sh", "-c", "exit " + std::to_string(code)});
    EXPECT_EQ(r.exit_code, code) << describe(r);
  }
}

TEST_P(ExitCodes, FalseIsOne) {
  RunResult r = run({"--", "false"});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
}

TEST_P(ExitCodes, KilledBySignalIs128PlusN) {
  RunResult usr1 = run({"--", "sh", "-c", "kill -USR1 $$"});
  EXPECT_EQ(usr1.exit_code, 138) << describe(usr1);
  RunResult kill9 = run({"--", "sh", "-c", "kill -KILL $$"});
  EXPECT_EQ(kill9.exit_code, 137) << describe(kill9);
  RunResult segv = run({"--", "sh", "-c", "kill -SEGV $$"});
  EXPECT_EQ(segv.exit_code, 139) << describe(segv);
}

TEST_P(ExitCodes, CommandNotFoundIs127) {
  RunResult r = run({"--", "no-such-command-for-jail-tests"});
  EXPECT_EQ(r.exit_code, 127) << describe(r);
  EXPECT_EQ(r.signal, 0) << describe(r);
}

TEST_P(ExitCodes, AbsolutePathNotFoundIs127) {
  RunResult r = run({"--", "/usr/bin/no-such-command-for-jail-tests"});
  EXPECT_EQ(r.exit_code, 127) << describe(r);
}

TEST_P(ExitCodes, HostOnlyPathIsNotSearched) {
  // A command on the caller's PATH but in a directory the jail does not show is not found.
  TempDir bin;
  write_file(bin / "jail-itest-host-only", "#!/bin/sh\nexit 0\n", 0755);
  RunResult r =
      run({"--", "jail-itest-host-only"}, {.extra_env = {"PATH=" + bin.path() + ":/usr/bin:/bin"}});
  EXPECT_EQ(r.exit_code, 127) << describe(r);
}

TEST_P(ExitCodes, LookupUsesThePathInside) {
  // The caller's PATH is useless inside; the jail's own PATH still finds `true`.
  RunResult r = run({"--", "true"}, {.extra_env = {"PATH=/nonexistent-for-jail-tests"}});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
}

TEST_P(ExitCodes, NotExecutableIs126) {
  write_file(cwd_ / "not-executable", "#!/bin/sh\nexit 0\n", 0644);
  RunResult r = run({"--", cwd_ / "not-executable"});
  EXPECT_EQ(r.exit_code, 126) << describe(r);
}

TEST_P(ExitCodes, DirectoryAsCommandIs126) {
  RunResult r = run({"--", "/usr/bin"});
  EXPECT_EQ(r.exit_code, 126) << describe(r);
  EXPECT_NE(r.err.find("it is a directory, or"), std::string::npos) << describe(r);
}

// A script without a #! line: the kernel's bare "Exec format error" now says what it needs.
TEST_P(ExitCodes, AScriptWithoutAnInterpreterLineIs126AndSaysWhy) {
  write_file(cwd_ / "no-shebang.sh", "echo hi\n", 0755);
  RunResult r = run({"--", "./no-shebang.sh"});
  EXPECT_EQ(r.exit_code, 126) << describe(r);
  EXPECT_NE(r.err.find("a script needs a #! line"), std::string::npos) << describe(r);
}

TEST_P(ExitCodes, RelativeCommandFromCwd) {
  write_file(cwd_ / "script.sh", "#!/bin/sh\nexit 5\n", 0755);
  RunResult r = run({"--", "./script.sh"});
  EXPECT_EQ(r.exit_code, 5) << describe(r);
}

// A script whose #! interpreter is missing is there: the message says what is missing (it said
// the script did not exist). Still 127, as a shell gives.
TEST_P(ExitCodes, MissingInterpreterIsNamedAsSuch) {
  write_file(cwd_ / "script.sh", "#!/nonexistent/interpreter\n", 0755);
  RunResult r = run({"--", "./script.sh"});
  EXPECT_EQ(r.exit_code, 127) << describe(r);
  EXPECT_NE(r.err.find("the interpreter its #! line names"), std::string::npos) << describe(r);
  RunResult absent = run({"--", "./no-such-script.sh"});
  EXPECT_EQ(absent.exit_code, 127) << describe(absent);
  EXPECT_NE(absent.err.find("does not exist inside the jail"), std::string::npos)
      << describe(absent);
}

// The same for a bare name found on the jail's PATH: execvp's search ends in ENOENT either way,
// and it was reported as "not on the jail's PATH".
TEST_P(ExitCodes, MissingInterpreterOfACommandOnThePathIsNamedAsSuch) {
  write_file(cwd_ / "jail-itest-orphan", "#!/nonexistent/interpreter\n", 0755);
  const std::string path = "PATH=/usr/bin:" + cwd_.path();
  RunResult r = run({"--env", path, "--", "jail-itest-orphan"});
  EXPECT_EQ(r.exit_code, 127) << describe(r);
  EXPECT_NE(r.err.find("the interpreter its #! line names"), std::string::npos) << describe(r);
  EXPECT_NE(r.err.find("on the jail's PATH"), std::string::npos) << describe(r);
  RunResult absent = run({"--env", path, "--", "jail-itest-none"});
  EXPECT_EQ(absent.exit_code, 127) << describe(absent);
  EXPECT_NE(absent.err.find("is not on the jail's PATH"), std::string::npos) << describe(absent);
}

// `--env PATH=` leaves nothing to search: said so, where the message showed "PATH ()".
TEST_P(ExitCodes, AnEmptyPathIsSaidToBeEmpty) {
  RunResult r = run({"--env", "PATH=", "--", "jail-itest-none"});
  EXPECT_EQ(r.exit_code, 127) << describe(r);
  EXPECT_NE(r.err.find("the jail's PATH is empty"), std::string::npos) << describe(r);
}

JAIL_INSTANTIATE_FOR_CALLERS(ExitCodes);

}  // namespace
}  // namespace jail_test
