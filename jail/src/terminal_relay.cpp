#include "terminal_relay.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>

#include <spdlog/spdlog.h>

#include "log.hpp"
#include "write_all.hpp"

namespace jail {
namespace {

constexpr std::size_t kChunk = 16 * 1024;

}  // namespace

TerminalRelay::TerminalRelay(UniqueFd master, int input, int output,
                             std::optional<std::uint64_t> cap)
    : master_(std::move(master)), input_(input), output_(output), left_(cap) {
  terminal_ = input_ >= 0 && ::isatty(input_) ? input_ : (::isatty(output_) ? output_ : -1);
  if (terminal_ >= 0 && ::tcgetattr(terminal_, &saved_) == 0) {
    // The pty starts with the caller's settings, then the caller's side goes raw.
    ::tcsetattr(master_.get(), TCSANOW, &saved_);
    if (terminal_ == input_) {
      termios raw = saved_;
      ::cfmakeraw(&raw);
      restore_ = ::tcsetattr(terminal_, TCSADRAIN, &raw) == 0;
    }
  }
  copy_window_size();
}

TerminalRelay::~TerminalRelay() {
  if (restore_) ::tcsetattr(terminal_, TCSADRAIN, &saved_);
}

void TerminalRelay::on_master_readable() {
  std::array<char, kChunk> buffer;
  const ssize_t n = ::read(master_.get(), buffer.data(), buffer.size());
  if (n > 0) {
    relay(buffer.data(), static_cast<std::size_t>(n));
  } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
    master_open_ = false;  // EIO: every slave is closed
  }
}

void TerminalRelay::on_input_readable() {
  std::array<char, kChunk> buffer;
  const ssize_t n = ::read(input_, buffer.data(), buffer.size());
  if (n > 0) {
    write_all(master_.get(), buffer.data(), static_cast<std::size_t>(n));
    return;
  }
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  // End of the caller's input: the tool reads end-of-file from its terminal too.
  // (Only a canonical-mode pty has an end-of-file character; 0 means it is disabled.)
  termios settings{};
  if (::tcgetattr(master_.get(), &settings) == 0 && (settings.c_lflag & ICANON) != 0 &&
      settings.c_cc[VEOF] != _POSIX_VDISABLE) {
    const char eof = static_cast<char>(settings.c_cc[VEOF]);
    write_all(master_.get(), &eof, 1);
  }
  input_ = -1;
}

void TerminalRelay::copy_window_size() {
  winsize size{};
  if (terminal_ >= 0 && ::ioctl(terminal_, TIOCGWINSZ, &size) == 0) {
    ::ioctl(master_.get(), TIOCSWINSZ, &size);
  }
}

void TerminalRelay::drain() {
  if (!master_open_) return;
  const int flags = ::fcntl(master_.get(), F_GETFL);
  ::fcntl(master_.get(), F_SETFL, flags | O_NONBLOCK);
  while (master_open_) {
    std::array<char, kChunk> buffer;
    const ssize_t n = ::read(master_.get(), buffer.data(), buffer.size());
    if (n <= 0) break;
    relay(buffer.data(), static_cast<std::size_t>(n));
  }
}

void TerminalRelay::relay(const char* data, std::size_t n) {
  const std::size_t room = left_ ? static_cast<std::size_t>(std::min<std::uint64_t>(*left_, n)) : n;
  if (room > 0 && !write_all(output_, data, room)) {
    jail::log().debug("the caller's output is gone; the tool's terminal output is dropped");
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
}

}  // namespace jail
