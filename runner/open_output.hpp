// Opening a file jail writes its own output to (--status-file, --audit-log, --log-file) without
// waiting: a FIFO at that path with no reader yet fails at once (ENXIO) instead of holding the
// run before it starts, in silence.
#pragma once

#include <fcntl.h>
#include <sys/types.h>

#include <cerrno>
#include <string>

namespace jail::runner {

// open(2) with `flags` (O_WRONLY and the caller's others), non-blocking only while it opens.
[[nodiscard]] inline int open_output(const std::string& path, int flags, mode_t mode) {
  const int fd = ::open(path.c_str(), flags | O_NONBLOCK, mode);
  if (fd >= 0) (void)::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

// Words to add to the error of an open_output that failed with `err`.
[[nodiscard]] inline const char* open_output_hint(int err) {
  if (err == ENXIO) return " (a FIFO that no one reads yet: start its reader first)";
  // Each of them is opened O_NOFOLLOW: jail often runs as root, and a link planted where its
  // output goes would have it append to a file of the planter's choosing.
  if (err == ELOOP) return " (it is a symlink: jail never writes its own output through one)";
  return "";
}

}  // namespace jail::runner
