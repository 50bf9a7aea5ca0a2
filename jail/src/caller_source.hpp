// Parent side: reading one of the caller's fds (its stdin, or its terminal) without ever
// blocking the supervisor. poll saying "readable" is no promise to this reader: another reader of
// the same pipe or terminal (another jail's relay, the host's own thread, a shell) may take the
// bytes first, and a blocking read would then wait with deadlines and seccomp answers unserved.
// As CallerSink does for writes, a pipe or terminal is opened again through /proc/self/fd with
// O_NONBLOCK (the caller's own open file description stays as it is), and a socket is read with
// MSG_DONTWAIT. A regular file is read as is: it never waits, and its offset is the caller's.
// A pipe or terminal that cannot be opened again (another user's) is read no further than
// FIONREAD says it holds.
#pragma once

#include <sys/types.h>

#include <cstddef>

#include "unique_fd.hpp"

namespace jail {

class CallerSource {
 public:
  explicit CallerSource(int fd);

  // The fd to poll for POLLIN; -1 for none.
  [[nodiscard]] int fd() const { return reopened_.valid() ? reopened_.get() : fd_; }
  // Reads what is there now: the bytes read, 0 at the end of the input, -1 with errno (EAGAIN:
  // nothing now, another reader took it; EIO: a terminal read from the background).
  [[nodiscard]] ssize_t read_some(char* data, std::size_t size);

 private:
  int fd_;
  UniqueFd reopened_;
  bool socket_ = false;
  bool counted_ = false;  // a pipe or terminal read through the caller's own blocking fd
};

}  // namespace jail
