// Child side, after clone: no allocation, no exceptions, no logging. See plan.hpp.
#include "child/terminal.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>

#include "child/fail.hpp"

namespace jail::child {

int open_pty(const Plan& plan) {
  const int master = ::open("/dev/pts/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0) fail(plan, Step::terminal, errno);
  int unlock = 0;
  if (::ioctl(master, TIOCSPTLCK, &unlock) != 0) fail(plan, Step::terminal, errno);
  // TIOCGPTPEER opens the slave through the master, not by a path a racing process could swap.
  const int slave = ::ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (slave < 0) fail(plan, Step::terminal, errno);
  if (!send_fd(plan.report_fd, ReportKind::terminal, master)) fail(plan, Step::terminal, errno);
  ::close(master);
  return slave;
}

void attach_pty(const Plan& plan, int slave) {
  if (::ioctl(slave, TIOCSCTTY, 0) != 0) fail(plan, Step::terminal, errno);
  for (int fd = 0; fd <= 2; ++fd) {
    if ((plan.pty_fds & (1u << fd)) != 0 && ::dup2(slave, fd) != fd) {
      fail(plan, Step::terminal, errno);
    }
  }
}

}  // namespace jail::child
