// Reading gVisor's denials out of runsc's debug log (jail/src/runsc/denial_log.hpp): the exact
// line, lines that only look like it, a line split around another process's long write, and
// the policy's answer named without the arguments gVisor does not log.
#include <fcntl.h>
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

#include "policy/policy.hpp"
#include "runsc/denial_log.hpp"

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
