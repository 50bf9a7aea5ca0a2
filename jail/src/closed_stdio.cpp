#include "jail/closed_stdio.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "jail/error.hpp"

namespace jail {

void occupy_closed_stdio() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
    // open() returns the lowest free number, which is `fd`: the lower ones are open by now.
    const int opened = ::open("/dev/null", (fd == 0 ? O_RDONLY : O_WRONLY));
    if (opened != fd) {
      const int err = opened < 0 ? errno : EBADF;
      if (opened >= 0) ::close(opened);
      throw Error("stdio", err,
                  fmt::format("fd {} is closed and /dev/null could not be opened in its place: {}",
                              fd, std::strerror(err)));
    }
  }
}

}  // namespace jail
