// Parent side: writing to one of the caller's fds (its stdout or stderr, or its terminal) without
// ever blocking the supervisor, whose deadlines and seccomp answers must not wait for a caller
// that stopped reading. The caller's own open file description is not made non-blocking (a shell
// shares it): a pipe or a terminal is opened again through /proc/self/fd with O_NONBLOCK, a
// socket is written with MSG_DONTWAIT, and a regular file, which never waits, is written as is.
// A pipe or terminal that cannot be opened again (another user's: jail run by someone else than
// the pipe's maker) is written only when poll says there is room, PIPE_BUF bytes at a time,
// which a pipe takes whole.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <optional>

#include "unique_fd.hpp"

namespace jail {

class CallerSink {
 public:
  using Clock = std::chrono::steady_clock;

  explicit CallerSink(int fd);

  // The fd to poll for POLLOUT, and to splice into.
  [[nodiscard]] int fd() const { return reopened_.valid() ? reopened_.get() : fd_; }
  // Whether splice may write into it without waiting (a pipe opened non-blocking).
  [[nodiscard]] bool splices() const { return pipe_; }
  // Writes what fits now: the bytes written, 0 when the caller's side is full, -1 when the
  // reader is gone or the write failed (errno says which).
  [[nodiscard]] ssize_t write_some(const char* data, std::size_t size);
  // Waits for room: true once there is, false when `stop` (an eventfd, -1 for none) is signalled
  // or `until` has passed first.
  [[nodiscard]] bool wait_for_room(int stop, std::optional<Clock::time_point> until) const;

 private:
  int fd_;
  UniqueFd reopened_;
  bool socket_ = false;
  bool pipe_ = false;
  bool blocking_ = false;  // a pipe or terminal written through the caller's own blocking fd
};

}  // namespace jail
