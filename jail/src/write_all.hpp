// Writing a whole buffer to an fd, for the parent side (pipes, terminals, files).
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstddef>

namespace jail {

// Writes all `size` bytes, through short writes and EINTR. false on an error (errno says which;
// EIO for a write that took nothing), with some of the bytes perhaps written.
inline bool write_all(int fd, const void* data, std::size_t size) {
  const char* next = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, next, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    next += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace jail
