#include "caller_sink.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <limits.h>

#include <algorithm>
#include <cerrno>
#include <string>

namespace jail {

CallerSink::CallerSink(int fd) : fd_(fd) {
  struct stat info {};
  if (fd < 0 || ::fstat(fd, &info) != 0) return;
  socket_ = S_ISSOCK(info.st_mode);
  if (S_ISFIFO(info.st_mode) || S_ISCHR(info.st_mode)) {
    const std::string self = "/proc/self/fd/" + std::to_string(fd);
    reopened_ = UniqueFd(::open(self.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    pipe_ = reopened_.valid() && S_ISFIFO(info.st_mode);
    blocking_ = !reopened_.valid();
  }
}

ssize_t CallerSink::write_some(const char* data, std::size_t size) {
  if (blocking_) {
    pollfd room{fd_, POLLOUT, 0};
    if (::poll(&room, 1, 0) == 0) return 0;
    size = std::min<std::size_t>(size, PIPE_BUF);
  }
  for (;;) {
    const ssize_t n =
        socket_ ? ::send(fd_, data, size, MSG_DONTWAIT | MSG_NOSIGNAL) : ::write(fd(), data, size);
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
  }
}

bool CallerSink::wait_for_room(int stop, std::optional<Clock::time_point> until) const {
  for (;;) {
    int wait_ms = -1;
    if (until) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(*until - Clock::now());
      if (left.count() <= 0) return false;
      wait_ms = static_cast<int>(std::min<long long>(left.count(), 60'000));
    }
    pollfd fds[2] = {{fd(), POLLOUT, 0}, {stop, POLLIN, 0}};
    const int ready = ::poll(fds, 2, wait_ms);
    if (ready < 0 && errno != EINTR) return false;
    if (fds[1].revents != 0) return false;
    // POLLERR or POLLHUP: the reader is gone; the next write says so.
    if (fds[0].revents != 0) return true;
  }
}

}  // namespace jail
