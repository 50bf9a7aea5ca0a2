#include "terminal_relay.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <spdlog/spdlog.h>

#include "log.hpp"

namespace jail {
namespace {

constexpr std::size_t kChunk = 16 * 1024;

}  // namespace

TerminalRelay::TerminalRelay(UniqueFd master, int input, int output,
                             std::optional<std::uint64_t> cap, bool tool_stdout_on_pty)
    : master_(std::move(master)), input_(input), input_reader_(input), output_(output), left_(cap) {
  ::fcntl(master_.get(), F_SETFL, ::fcntl(master_.get(), F_GETFL) | O_NONBLOCK);
  terminal_ = input_ >= 0 && ::isatty(input_) ? input_ : (::isatty(output) ? output : -1);
  if (terminal_ >= 0 && ::tcgetattr(terminal_, &saved_) == 0) {
    // The pty starts with the caller's settings, then the caller's side goes raw.
    ::tcsetattr(master_.get(), TCSANOW, &saved_);
    if (terminal_ == input_) {
      termios raw = saved_;
      ::cfmakeraw(&raw);
      // The pty does the tool's output processing (its own ONLCR); the caller's terminal must
      // not do it again. When the tool's stdout is a pipe (`jail -- seq 3 | cat`), what reaches
      // the terminal meanwhile is another program's, which needs the terminal's own: kept.
      if (!tool_stdout_on_pty) raw.c_oflag = saved_.c_oflag;
      restore_ = ::tcsetattr(terminal_, TCSADRAIN, &raw) == 0;
    }
  }
  copy_window_size();
}

TerminalRelay::~TerminalRelay() {
  if (restore_) ::tcsetattr(terminal_, TCSADRAIN, &saved_);
}

std::array<pollfd, 3> TerminalRelay::poll_entries() const {
  std::array<pollfd, 3> entries{{{-1, 0, 0}, {-1, 0, 0}, {-1, 0, 0}}};
  if (master_open_) {
    const short events =
        static_cast<short>((to_output_.empty() ? POLLIN : 0) | (to_master_.empty() ? 0 : POLLOUT));
    if (events != 0) entries[0] = {master_.get(), events, 0};
  }
  if (input_ >= 0 && to_master_.empty() && !input_ended_)
    entries[1] = {input_reader_.fd(), POLLIN, 0};
  if (!to_output_.empty()) entries[2] = {output_.fd(), POLLOUT, 0};
  return entries;
}

void TerminalRelay::events(const std::array<pollfd, 3>& ready) {
  if (ready[2].revents != 0) write_output();
  if ((ready[0].revents & POLLOUT) != 0) write_master();
  if ((ready[0].revents & ~POLLOUT) != 0) read_master();
  if (ready[1].revents != 0) read_input();
}

void TerminalRelay::read_master() {
  if (!to_output_.empty()) return;
  std::array<char, kChunk> buffer;
  const ssize_t n = ::read(master_.get(), buffer.data(), buffer.size());
  if (n > 0) {
    take_output(buffer.data(), static_cast<std::size_t>(n));
  } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
    master_open_ = false;  // EIO: every slave is closed
  }
}

void TerminalRelay::read_input() {
  std::array<char, kChunk> buffer;
  const ssize_t n = input_reader_.read_some(buffer.data(), buffer.size());
  if (n > 0) {
    to_master_.assign(buffer.data(), static_cast<std::size_t>(n));
    write_master();
    return;
  }
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  // End of the caller's input: the tool reads end-of-file from its terminal too.
  // (Only a canonical-mode pty has an end-of-file character; 0 means it is disabled.)
  input_ended_ = true;
  termios settings{};
  if (::tcgetattr(master_.get(), &settings) == 0 && (settings.c_lflag & ICANON) != 0 &&
      settings.c_cc[VEOF] != _POSIX_VDISABLE) {
    to_master_.assign(1, static_cast<char>(settings.c_cc[VEOF]));
    write_master();
  }
}

void TerminalRelay::write_master() {
  if (!master_open_) {
    to_master_.clear();
    return;
  }
  const ssize_t n = ::write(master_.get(), to_master_.data(), to_master_.size());
  if (n > 0) {
    to_master_.erase(0, static_cast<std::size_t>(n));
  } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
    to_master_.clear();  // the pty is gone with the tool
  }
}

void TerminalRelay::write_output() {
  if (output_gone_) {
    to_output_.clear();
    return;
  }
  const ssize_t n = output_.write_some(to_output_.data(), to_output_.size());
  if (n < 0) {
    jail::log().debug("the caller's output is gone; the tool's terminal output is dropped");
    output_gone_ = true;
    to_output_.clear();
    return;
  }
  to_output_.erase(0, static_cast<std::size_t>(n));
}

void TerminalRelay::copy_window_size() {
  winsize size{};
  if (terminal_ >= 0 && ::ioctl(terminal_, TIOCGWINSZ, &size) == 0) {
    ::ioctl(master_.get(), TIOCSWINSZ, &size);
  }
}

void TerminalRelay::drain(int stop, std::optional<Clock::time_point> until) {
  for (;;) {
    if (!to_output_.empty()) {
      write_output();
      if (!to_output_.empty() && !output_.wait_for_room(stop, until)) {
        jail::log().warn("the caller did not read the tool's last output in time; dropped");
        return;
      }
      continue;
    }
    if (!master_open_) return;
    std::array<char, kChunk> buffer;
    const ssize_t n = ::read(master_.get(), buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // EAGAIN: the tool's last words are all out; EIO: none were left
    take_output(buffer.data(), static_cast<std::size_t>(n));
  }
}

void TerminalRelay::take_output(const char* data, std::size_t n) {
  const std::size_t room = left_ ? static_cast<std::size_t>(std::min<std::uint64_t>(*left_, n)) : n;
  if (room > 0) {
    to_output_.assign(data, room);
    write_output();
  }
  if (!left_) return;
  *left_ -= room;
  if (room == n) return;
  // Past the cap: the pty is hung up, as a terminal that went away (SIGHUP to the tool's
  // session, EIO on its next write), the way a pipe's closed end gives EPIPE.
  truncated_ = true;
  jail::log().info("the tool's output reached the cap; its terminal is hung up");
  master_.reset();
  master_open_ = false;
  to_master_.clear();
}

}  // namespace jail
