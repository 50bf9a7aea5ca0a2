#include "caller_source.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>

namespace jail {

CallerSource::CallerSource(int fd) : fd_(fd) {
  struct stat info {};
  if (fd < 0 || ::fstat(fd, &info) != 0) return;
  socket_ = S_ISSOCK(info.st_mode);
  const bool waits = S_ISFIFO(info.st_mode) || (S_ISCHR(info.st_mode) && ::isatty(fd) == 1);
  if (!waits) return;
  const std::string self = "/proc/self/fd/" + std::to_string(fd);
  reopened_ = UniqueFd(::open(self.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  counted_ = !reopened_.valid();
}

ssize_t CallerSource::read_some(char* data, std::size_t size) {
  if (counted_) {
    int held = 0;
    if (::ioctl(fd_, FIONREAD, &held) == 0 && held == 0) {
      // Empty: the end of the input (no writer left, or a terminal's end-of-file character,
      // which FIONREAD does not count), or another reader took what poll saw.
      pollfd ready{fd_, POLLIN, 0};
      if (::poll(&ready, 1, 0) <= 0) {
        errno = EAGAIN;
        return -1;
      }
      const bool ended = (ready.revents & POLLHUP) != 0 && (ready.revents & POLLIN) == 0;
      if (ended) return 0;
    } else if (held > 0) {
      size = std::min<std::size_t>(size, static_cast<std::size_t>(held));
    }
  }
  for (;;) {
    const ssize_t n = socket_ ? ::recv(fd_, data, size, MSG_DONTWAIT) : ::read(fd(), data, size);
    if (n >= 0 || errno != EINTR) {
      if (n < 0 && errno == EWOULDBLOCK) errno = EAGAIN;
      return n;
    }
  }
}

}  // namespace jail
