#include "input_relay.hpp"

#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>

namespace jail {
namespace {

// How often a terminal jail is in the background of is looked at again: the shell's `fg` gives
// no event a library caller's process could wait for without changing its signal handling.
constexpr std::chrono::milliseconds kBackgroundRecheck{250};

// Only a controlling terminal stops a background reader; another one (tcgetpgrp fails) is read
// as any file is.
bool may_read(int terminal) {
  const pid_t foreground = ::tcgetpgrp(terminal);
  return foreground < 0 || foreground == ::getpgrp();
}

}  // namespace

InputRelay::InputRelay(int source, UniqueFd sink, UniqueFd spare_reader)
    : source_(source),
      reader_(source),
      sink_(std::move(sink)),
      keep_open_(std::move(spare_reader)),
      source_is_terminal_(::isatty(source) == 1),
      buffer_(std::make_unique<std::array<char, 64 * 1024>>()) {
  ::fcntl(sink_.get(), F_SETFL, ::fcntl(sink_.get(), F_GETFL) | O_NONBLOCK);
}

pollfd InputRelay::poll_entry() const {
  if (!sink_.valid() || parked_until_) return {-1, 0, 0};
  if (pending_begin_ < pending_end_) return {sink_.get(), POLLOUT, 0};
  return {reader_.fd(), POLLIN, 0};
}

void InputRelay::on_ready() {
  if (!sink_.valid()) return;
  if (parked_until_) {
    if (Clock::now() < *parked_until_) return;
    parked_until_.reset();
  }
  if (pending_begin_ < pending_end_) {
    flush();
  } else {
    read_chunk();
  }
}

void InputRelay::read_chunk() {
  if (source_is_terminal_ && !may_read(source_)) {
    parked_until_ = Clock::now() + kBackgroundRecheck;
    return;
  }
  const ssize_t n = reader_.read_some(buffer_->data(), buffer_->size());
  if (n > 0) {
    pending_begin_ = 0;
    pending_end_ = static_cast<std::size_t>(n);
    flush();
    return;
  }
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  // A background read that SIGTTIN did not stop (the caller ignores or blocks it, or its process
  // group is orphaned): wait for the foreground.
  if (n < 0 && errno == EIO && source_is_terminal_) {
    parked_until_ = Clock::now() + kBackgroundRecheck;
    return;
  }
  finish();  // end of the caller's input, or a read error: the tool reads end-of-file
}

void InputRelay::flush() {
  while (pending_begin_ < pending_end_) {
    const ssize_t n =
        ::write(sink_.get(), buffer_->data() + pending_begin_, pending_end_ - pending_begin_);
    if (n > 0) {
      pending_begin_ += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;  // the tool has not read yet: poll for room
    finish();
    return;
  }
}

void InputRelay::finish() {
  sink_.reset();
  keep_open_.reset();
  pending_begin_ = pending_end_ = 0;
}

}  // namespace jail
