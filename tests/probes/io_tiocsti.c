// Tries to push characters into the input queue of every terminal it can reach (TIOCSTI), with
// the plain request and with high bits set (the kernel reads the request as 32 bits, so a filter
// comparing all 64 would be bypassed). Prints one line per attempt: "<target> <request>: <result>"
// where result is "ok" or the errno name; exits 0 when every attempt failed, 1 otherwise.
// Run inside a jail on a terminal: nothing it does may reach the caller's terminal.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char* errno_name(int e) {
  switch (e) {
    case EPERM:
      return "EPERM";
    case EIO:
      return "EIO";
    case ENOTTY:
      return "ENOTTY";
    case EBADF:
      return "EBADF";
    case EINVAL:
      return "EINVAL";
    case EFAULT:
      return "EFAULT";
    case EACCES:
      return "EACCES";
    case ENOSYS:
      return "ENOSYS";
    case ENXIO:
      return "ENXIO";
    default:
      return "other";
  }
}

static int attempts_ok = 0;

static void try_inject(const char* target, int fd) {
  static const struct {
    const char* name;
    unsigned long request;
  } requests[] = {
      {"TIOCSTI", (unsigned long)TIOCSTI},
      {"TIOCSTI|1<<32", (unsigned long)TIOCSTI | (1ul << 32)},
      {"TIOCSTI|0xdead<<32", (unsigned long)TIOCSTI | (0xdeadul << 32)},
  };
  // A whole command line, so that an injection that got through would also run in the caller's
  // shell and show there.
  static const char payload[] = "x;echo INJECTED\n";
  for (size_t i = 0; i < sizeof requests / sizeof requests[0]; ++i) {
    int ok = 1;
    int err = 0;
    for (size_t c = 0; c + 1 < sizeof payload; ++c) {
      if (syscall(SYS_ioctl, fd, requests[i].request, &payload[c]) != 0) {
        ok = 0;
        err = errno;
        break;
      }
    }
    if (ok) ++attempts_ok;
    printf("%s %s: %s\n", target, requests[i].name, ok ? "ok" : errno_name(err));
  }
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  for (int fd = 0; fd <= 2; ++fd) {
    char target[16];
    snprintf(target, sizeof target, "fd%d", fd);
    try_inject(target, fd);
  }
  int tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (tty < 0) {
    printf("/dev/tty open: %s\n", errno_name(errno));
  } else {
    try_inject("/dev/tty", tty);
    close(tty);
  }
  printf("tiocsti-probe-done ok=%d\n", attempts_ok);
  return attempts_ok == 0 ? 0 : 1;
}
