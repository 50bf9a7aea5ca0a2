// CallerSource: a relay reading the caller's stdin or terminal never waits in read(). poll says
// "readable" to every reader of a pipe or terminal; when another reader (another jail's relay,
// a thread of the host's) takes the bytes first, a blocking read would hold the supervisor —
// its deadlines, its seccomp answers — until more input came.
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <future>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "../support/time_scale.hpp"
#include "caller_source.hpp"

namespace {

using namespace std::chrono_literals;

// Polls `source` until it says readable, lets `thief` take the bytes through its own fd, then
// reads through the source, on a thread of its own: a read that waits is reported, and the
// writer `unblock` is given a byte so that the test can end.
void expect_no_wait_after_a_theft(jail::CallerSource& source, int thief, int unblock) {
  pollfd ready{source.fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&ready, 1, static_cast<int>(jail_test::scaled(2s).count())), 1);
  char taken[16];
  ASSERT_GT(::read(thief, taken, sizeof taken), 0);
  auto attempt = std::async(std::launch::async, [&] {
    char buffer[16];
    const ssize_t n = source.read_some(buffer, sizeof buffer);
    return std::make_pair(n, errno);
  });
  if (attempt.wait_for(jail_test::scaled(2s)) != std::future_status::ready) {
    ADD_FAILURE() << "read_some waited for input another reader had taken";
    ASSERT_EQ(::write(unblock, "u", 1), 1);
  }
  const auto [n, err] = attempt.get();
  if (n != 1) {  // 1: the byte written to end a wait that was already reported
    EXPECT_EQ(n, -1);
    EXPECT_EQ(err, EAGAIN);
  }
}

TEST(CallerSource, APipeAnotherReaderEmptiedIsNotWaitedOn) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  jail::CallerSource source(fds[0]);
  ASSERT_EQ(::write(fds[1], "x", 1), 1);
  expect_no_wait_after_a_theft(source, fds[0], fds[1]);
  // The end of the input is still seen as such.
  ::close(fds[1]);
  char buffer[4];
  EXPECT_EQ(source.read_some(buffer, sizeof buffer), 0);
  ::close(fds[0]);
}

TEST(CallerSource, ATerminalAnotherReaderEmptiedIsNotWaitedOn) {
  int master = -1, slave = -1;
  ASSERT_EQ(::openpty(&master, &slave, nullptr, nullptr, nullptr), 0);
  termios raw{};
  ASSERT_EQ(::tcgetattr(slave, &raw), 0);
  ::cfmakeraw(&raw);
  ASSERT_EQ(::tcsetattr(slave, TCSANOW, &raw), 0);
  jail::CallerSource source(slave);
  ASSERT_EQ(::write(master, "x", 1), 1);
  expect_no_wait_after_a_theft(source, slave, master);
  ::close(master);
  ::close(slave);
}

TEST(CallerSource, ASocketAnotherReaderEmptiedIsNotWaitedOn) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  jail::CallerSource source(fds[0]);
  ASSERT_EQ(::write(fds[1], "x", 1), 1);
  expect_no_wait_after_a_theft(source, fds[0], fds[1]);
  ::close(fds[0]);
  ::close(fds[1]);
}

// A pipe the caller cannot open again (another user's: here root's, read by uid 65534) is read
// no further than it holds.
TEST(CallerSource, AnotherUsersPipeIsReadNoFurtherThanItHolds) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0)
      ::_exit(120);
    jail::CallerSource source(fds[0]);
    if (source.fd() != fds[0]) ::_exit(121);  // it was opened again after all
    pollfd ready{fds[0], POLLIN, 0};
    if (::poll(&ready, 1, 5000) != 1) ::_exit(122);
    char taken[4];
    if (::read(fds[0], taken, sizeof taken) != 1) ::_exit(123);
    char buffer[4];
    errno = 0;
    const ssize_t n = source.read_some(buffer, sizeof buffer);  // must not wait
    ::_exit(n == -1 && errno == EAGAIN ? 0 : 124);
  }
  ASSERT_EQ(::write(fds[1], "x", 1), 1);
  const auto deadline = std::chrono::steady_clock::now() + jail_test::scaled(5s);
  int status = 0;
  while (::waitpid(child, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << "read_some waited on another user's pipe";
      (void)!::write(fds[1], "u", 1);
      ::waitpid(child, &status, 0);
      break;
    }
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "wait status " << status;
  ::close(fds[0]);
  ::close(fds[1]);
}

}  // namespace
