// Reading gVisor's denials out of runsc's debug log (jail/src/runsc/denial_log.hpp): the exact
// line, lines that only look like it, a line split around another process's long write, and
// the policy's answer named without the arguments gVisor does not log.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

#include "policy/policy.hpp"
#include "runsc/denial_log.hpp"
#include "runsc/exec_failure.hpp"

namespace jail {
namespace {

constexpr const char* kDenied =
    "D1129 18:04:08.199349   23133 task_syscall.go:240] [   1:   1] Syscall 101: denied by seccomp";

TEST(RunscDenialLine, ReadsTheSentrysLine) {
  const auto denial = parse_denial_line(kDenied);
  ASSERT_TRUE(denial.has_value());
  EXPECT_EQ(denial->number, 101);
  EXPECT_EQ(denial->pid, 1);
  EXPECT_FALSE(denial->killed);
  const auto killed = parse_denial_line(
      "D1129 18:04:08.199349   23133 task_syscall.go:246] [  12:  14] Syscall 170: killed by "
      "seccomp\n");
  ASSERT_TRUE(killed.has_value());
  EXPECT_EQ(killed->number, 170);
  EXPECT_EQ(killed->pid, 12);
  EXPECT_TRUE(killed->killed);
}

TEST(RunscDenialLine, OtherLinesAreNotDenials) {
  for (const char* line : {
           "D1129 18:04:08.067069       1 seccomp.go:174] syscall filter read: [] => 0x616c6c6f77",
           "I1129 18:04:08.205534   23133 boot.go:389] application exiting with killed by signal "
           "31",
           "D1129 18:04:08.199349   23133 task_syscall.go:240] [   1:   1] Syscall 101: denied by "
           "seccomp and more",
           "D1129 18:04:08.199349   23133 other.go:240] [   1:   1] Syscall 101: denied by seccomp",
           "D1129 18:04:08.199349   23133 task_syscall.go:240] [   1:   1] Syscall x: denied by "
           "seccomp",
           "D1129 18:04:08.199349   23133 task_syscall.go:240] [   0:   1] Syscall 3: denied by "
           "seccomp",
           "D1129 18:04:08.199349   23133 task_syscall.go:240] Syscall 101: denied by seccomp",
           ": denied by seccomp",
           "",
       }) {
    EXPECT_FALSE(parse_denial_line(line).has_value()) << line;
  }
}

// runsc's processes share the log pipe; a write longer than PIPE_BUF may be split around a
// short one, which then ends another line.
TEST(RunscDenialLine, FoundAtTheEndOfAMergedLine) {
  const std::string merged =
      std::string("D1129 18:04:08.1 1 client.go:400] recv [channel] WalkResp{Inodes: [") + kDenied;
  const auto denial = parse_denial_line(merged);
  ASSERT_TRUE(denial.has_value());
  EXPECT_EQ(denial->number, 101);
}

struct LogPipe {
  int read_end = -1;
  int write_end = -1;
  LogPipe() {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC | O_NONBLOCK), 0);
    read_end = fds[0];
    write_end = fds[1];
  }
  void write(const std::string& text) const {
    EXPECT_EQ(::write(write_end, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  }
  void close_writer() {
    ::close(write_end);
    write_end = -1;
  }
  ~LogPipe() {
    if (write_end >= 0) ::close(write_end);
  }
};

std::shared_ptr<const policy::Policy> default_policy() {
  return std::make_shared<const policy::Policy>(policy::load_policy("default"));
}

TEST(RunscDenialLog, CountsDenialsAndNamesThePolicysAnswer) {
  LogPipe pipe;
  RunscDenialLog log(UniqueFd(pipe.read_end), default_policy());
  // sethostname (170) gets errno under the default policy, ptrace (101) kill; the line is fed
  // in two pieces, as a pipe may deliver it.
  pipe.write("D1129 18:04:08.1   1 loader.go:181] noise\n");
  pipe.write(
      "D1129 18:04:08.2   1 task_syscall.go:240] [   3:   4] Syscall 170: denied by seccomp\nD1129 "
      "18:04");
  log.on_readable();
  EXPECT_EQ(log.denials().count, 1u);
  EXPECT_FALSE(log.kill_denial().has_value());
  pipe.write(":08.3   1 task_syscall.go:240] [   3:   3] Syscall 101: denied by seccomp\n");
  pipe.close_writer();
  log.drain();
  EXPECT_FALSE(log.open());
  ASSERT_EQ(log.denials().count, 2u);
  ASSERT_EQ(log.denials().first.size(), 2u);
  EXPECT_EQ(log.denials().first[0].syscall, "sethostname");
  EXPECT_EQ(log.denials().first[0].pid, 3);
  EXPECT_EQ(log.denials().first[0].action, "errno EPERM");
  EXPECT_EQ(log.denials().first[1].syscall, "ptrace");
  EXPECT_EQ(log.denials().first[1].action, "kill");
  ASSERT_TRUE(log.kill_denial().has_value());
  EXPECT_EQ(log.kill_denial()->syscall, "ptrace");
}

// A line far longer than what is kept of it (a gofer reply listing a big directory) neither
// grows memory without bound nor hides the denial that ends it.
TEST(RunscDenialLog, AVeryLongLineStillEndsInItsDenial) {
  LogPipe pipe;
  RunscDenialLog log(UniqueFd(pipe.read_end), default_policy());
  const std::string filler(8000, 'x');
  for (int i = 0; i < 6; ++i) {
    pipe.write(filler);
    log.on_readable();
  }
  pipe.write(std::string(kDenied) + "\n");
  pipe.close_writer();
  log.drain();
  EXPECT_EQ(log.denials().count, 1u);
}

}  // namespace
}  // namespace jail

namespace jail {
namespace {

// runsc run folds a death by signal n into its own exit 128+n, so the sentry's own line is what
// tells a tool's exit(130) from its death by SIGINT (and a tool's exit(128) from runsc's failure).
TEST(RunscToolExitLine, ReadsTheSentrysLineAsAWaitStatus) {
  EXPECT_EQ(parse_tool_exit_line("I1130 05:53:52.935892   21145 boot.go:389] application exiting "
                                 "with exit status 130\n"),
            130 << 8);
  EXPECT_EQ(parse_tool_exit_line("I1130 05:53:53.387828   21249 boot.go:389] application exiting "
                                 "with killed by signal 2"),
            2);
  EXPECT_FALSE(parse_tool_exit_line("I1130 05:53:52 1 boot.go:389] application exiting with "
                                    "exit status 300")
                   .has_value());
  EXPECT_FALSE(parse_tool_exit_line("D1130 1 task_exit.go:204] [   1:   1] Transitioning from "
                                    "exit state TaskExitNone to TaskExitInitiated")
                   .has_value());
}

TEST(RunscDenialLog, TheLastExitLineIsTheToolsEnd) {
  LogPipe pipe;
  RunscDenialLog log(UniqueFd(pipe.read_end), nullptr);
  EXPECT_FALSE(log.tool_status().has_value());
  // A line the tool got into the log (a file name it made up, logged by a gofer call) comes
  // before the sentry's own, which is written once the tool is gone.
  pipe.write(
      "D1130 1 client.go:400] send WalkReq{Path: x] application exiting with exit status 0}\n");
  pipe.write("I1130 1 boot.go:389] application exiting with killed by signal 9\n");
  pipe.close_writer();
  log.drain();
  ASSERT_TRUE(log.tool_status().has_value());
  EXPECT_TRUE(WIFSIGNALED(*log.tool_status()));
  EXPECT_EQ(WTERMSIG(*log.tool_status()), 9);
}

// runsc exits 128 for its own failures; a command not found or not executable is told apart by
// its words, in its --log's JSON lines or its stderr, and so is a search of PATH from a load.
TEST(RunscExecFailure, NamesTheExecsErrnoAndStep) {
  const auto failure = exec_failure_in_runsc_error(
      R"({"msg":"running container: starting container: starting root container: )"
      R"(starting sandbox: error finding executable \"nope\" in PATH [/usr/bin]: no )"
      R"(such file or directory","level":"error","time":"2026-11-30T05:55:55Z"})"
      "\n");
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->err, ENOENT);
  EXPECT_FALSE(failure->loading);
  const auto denied = exec_failure_in_runsc_error(
      "running container: starting sandbox: creating process: "
      "failed to load /etc/passwd: permission denied\n");
  ASSERT_TRUE(denied.has_value());
  EXPECT_EQ(denied->err, EACCES);
  EXPECT_TRUE(denied->loading);
  const auto missing =
      exec_failure_in_runsc_error("creating process: failed to load /x: no such file or directory");
  ASSERT_TRUE(missing.has_value());
  EXPECT_EQ(missing->err, ENOENT);
  EXPECT_TRUE(missing->loading);
  const auto format =
      exec_failure_in_runsc_error("creating process: failed to load /x: exec format error");
  ASSERT_TRUE(format.has_value());
  EXPECT_EQ(format->err, ENOEXEC);
  EXPECT_FALSE(exec_failure_in_runsc_error(R"({"msg":"creating container: cannot create gofer )"
                                           R"(process: no such file or directory"})")
                   .has_value());
  EXPECT_FALSE(exec_failure_in_runsc_error("").has_value());
}

}  // namespace
}  // namespace jail
