// The caller's stdin relayed to a runsc tool (jail/src/input_relay.hpp): everything arrives and
// ends with end-of-file, the relay reads no further ahead than the tool's pipe holds, and it
// never reads its controlling terminal from the background, where a read would stop it with
// SIGTTIN.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "../support/time_scale.hpp"
#include "input_relay.hpp"
#include "spawn_support.hpp"
#include "temp_dir.hpp"

namespace jail {
namespace {

// The relay as the supervisor makes it: its sink the pipe's write end, a spare reader beside.
InputRelay relay_into(int source, Pipe& tool) {
  return InputRelay(source, std::move(tool.write), UniqueFd(::dup(tool.read.get())));
}

std::string read_available(int fd) {
  std::string text;
  char buffer[65536];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;)
    text.append(buffer, static_cast<std::size_t>(n));
  return text;
}

TEST(InputRelay, FileArrivesWholeAndReadsAheadOnlyAsFarAsThePipeHolds) {
  TempDir dir("jail-test-input-relay", std::filesystem::temp_directory_path());
  const std::string path = dir.path() / "input";
  std::string data;
  for (int i = 0; data.size() < (1 << 20); ++i) data += "line " + std::to_string(i) + "\n";
  {
    UniqueFd out(::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
    ASSERT_EQ(::write(out.get(), data.data(), data.size()), static_cast<ssize_t>(data.size()));
  }
  UniqueFd source(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  Pipe tool = make_pipe("the tool's stdin");
  ASSERT_TRUE(tool.read.valid());
  const int capacity = ::fcntl(tool.write.get(), F_GETPIPE_SZ);
  InputRelay relay = relay_into(source.get(), tool);

  // The tool reads nothing yet: the relay fills its pipe, then waits for room.
  for (int i = 0; i < 100 && relay.poll_entry().events != POLLOUT; ++i) relay.on_ready();
  EXPECT_EQ(relay.poll_entry().events, POLLOUT);
  const off_t read_ahead = ::lseek(source.get(), 0, SEEK_CUR);
  EXPECT_LE(read_ahead, capacity + 64 * 1024) << "read further ahead than the pipe holds";

  ::fcntl(tool.read.get(), F_SETFL, O_NONBLOCK);
  std::string arrived;
  for (int i = 0; i < 10000 && relay.poll_entry().fd >= 0; ++i) {
    arrived += read_available(tool.read.get());
    relay.on_ready();
  }
  arrived += read_available(tool.read.get());
  EXPECT_EQ(relay.poll_entry().fd, -1) << "the relay did not end at the file's end";
  EXPECT_EQ(arrived.size(), data.size());
  EXPECT_TRUE(arrived == data);
  EXPECT_EQ(::read(tool.read.get(), nullptr, 0), 0);
}

// A tool that exits without reading its stdin closes the pipe's only other reader: the relay's
// writes then wait for room that never comes, rather than raise SIGPIPE in the caller (a
// library host need not ignore it; this test's process does not).
TEST(InputRelay, ToolThatNeverReadsRaisesNoSigpipe) {
  TempDir dir("jail-test-input-relay", std::filesystem::temp_directory_path());
  const std::string path = dir.path() / "input";
  {
    const std::string data(1 << 20, 'x');
    UniqueFd out(::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
    ASSERT_EQ(::write(out.get(), data.data(), data.size()), static_cast<ssize_t>(data.size()));
  }
  UniqueFd source(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  Pipe tool = make_pipe("the tool's stdin");
  InputRelay relay = relay_into(source.get(), tool);
  tool.read.reset();  // the tool is gone
  for (int i = 0; i < 100 && relay.poll_entry().events != POLLOUT; ++i) relay.on_ready();
  EXPECT_EQ(relay.poll_entry().events, POLLOUT) << "the relay should wait for room";
}

// What the child below reports through its exit status.
enum Step : int {
  kPassed = 0,
  kNoTerminal = 10,
  kNoForeground,
  kReadInBackground,
  kNotParked,
  kNotReadInForeground,
};

// The relay runs in a process group of its own under a session leader that holds the terminal:
// a group that is not orphaned, so a read from the background would stop it with SIGTTIN (an
// orphaned one only gets EIO).
int relay_in_background_group(int slave, int status_out, int go_in) {
  Pipe tool = make_pipe("the tool's stdin");
  ::fcntl(tool.read.get(), F_SETFL, O_NONBLOCK);
  InputRelay relay = relay_into(slave, tool);
  relay.on_ready();
  char step = kPassed;
  if (!read_available(tool.read.get()).empty()) step = kReadInBackground;
  if (step == kPassed && (relay.poll_entry().fd != -1 || !relay.wake())) step = kNotParked;
  (void)!::write(status_out, &step, 1);
  if (step != kPassed) return step;
  char go = 0;
  if (::read(go_in, &go, 1) != 1) return kNoForeground;  // now in the foreground
  std::string arrived;
  // Polled for 2 s (scaled): what the relay reads is there at its next turn.
  const auto rounds = static_cast<int>(jail_test::scaled(100.0));
  for (int i = 0; i < rounds && arrived.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (relay.wake() && InputRelay::Clock::now() < *relay.wake()) continue;
    relay.on_ready();
    arrived = read_available(tool.read.get());
  }
  return arrived == "typed\n" ? kPassed : kNotReadInForeground;
}

int relay_from_the_background_of(int master, const std::string& slave_name) {
  if (::setsid() < 0) return kNoTerminal;
  const int slave = ::open(slave_name.c_str(), O_RDWR | O_CLOEXEC);
  if (slave < 0 || ::ioctl(slave, TIOCSCTTY, 0) != 0) return kNoTerminal;
  if (::write(master, "typed\n", 6) != 6) return kNoTerminal;
  Pipe status = make_pipe("the status pipe");
  Pipe go = make_pipe("the go pipe");
  const pid_t relay = ::fork();
  if (relay == 0) {
    ::setpgid(0, 0);
    ::_exit(relay_in_background_group(slave, status.write.get(), go.read.get()));
  }
  ::setpgid(relay, relay);
  // Either the relay reports that it held off, or it read and was stopped.
  char step = -1;
  pollfd wait_for_status{status.read.get(), POLLIN, 0};
  int stop_status = 0;
  const auto rounds = static_cast<int>(jail_test::scaled(200.0));  // 2 s, scaled
  for (int i = 0; i < rounds && step < 0; ++i) {
    if (::poll(&wait_for_status, 1, 10) == 1 && ::read(status.read.get(), &step, 1) == 1) break;
    if (::waitpid(relay, &stop_status, WNOHANG | WUNTRACED) == relay && WIFSTOPPED(stop_status)) {
      step = kReadInBackground;
      break;
    }
  }
  int result = step < 0 ? static_cast<int>(kNotParked) : step;
  if (result == kPassed) {
    if (::tcsetpgrp(slave, relay) != 0) result = kNoForeground;
    (void)!::write(go.write.get(), "g", 1);
    int exit_status = 0;
    if (result == kPassed && ::waitpid(relay, &exit_status, 0) == relay)
      result = WIFEXITED(exit_status) ? WEXITSTATUS(exit_status) : kNotReadInForeground;
  }
  ::kill(relay, SIGKILL);
  ::waitpid(relay, nullptr, 0);
  return result;
}

TEST(InputRelay, ControllingTerminalIsNotReadFromTheBackground) {
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  ASSERT_GE(master, 0);
  ASSERT_EQ(::grantpt(master), 0);
  ASSERT_EQ(::unlockpt(master), 0);
  const std::string slave_name = ::ptsname(master);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(relay_from_the_background_of(master, slave_name));

  int status = 0;
  const auto rounds = static_cast<int>(jail_test::scaled(500.0));  // 5 s, scaled
  for (int i = 0; i < rounds; ++i) {
    const pid_t done = ::waitpid(child, &status, WNOHANG | WUNTRACED);
    if (done == child) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (WIFSTOPPED(status)) {
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    FAIL() << "the session leader was stopped by signal " << WSTOPSIG(status);
  }
  if (!WIFEXITED(status)) {
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    FAIL() << "the child neither exited nor stopped within " << rounds / 100 << " s";
  }
  ::close(master);
  EXPECT_EQ(WEXITSTATUS(status), kPassed)
      << "10 no terminal, 11 no foreground change, 12 read in the background, 13 not parked, "
         "14 not read once in the foreground";
}

}  // namespace
}  // namespace jail
