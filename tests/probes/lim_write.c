/* lim_write [--ignore-sigxfsz] PATH BYTES: writes BYTES zero bytes to PATH (created, truncated)
 * in 64 KiB chunks and stops at the first failure. Prints "wrote N" and then "result ok" or
 * "result NAME" (EFBIG, ENOSPC, ...). Without --ignore-sigxfsz, SIGXFSZ keeps its default action
 * (the process dies when it passes RLIMIT_FSIZE). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char* errno_name(int e) {
  switch (e) {
    case EFBIG:
      return "EFBIG";
    case ENOSPC:
      return "ENOSPC";
    case EDQUOT:
      return "EDQUOT";
    default:
      return strerror(e);
  }
}

int main(int argc, char** argv) {
  int arg = 1;
  if (argc > 1 && strcmp(argv[1], "--ignore-sigxfsz") == 0) {
    signal(SIGXFSZ, SIG_IGN);
    ++arg;
  }
  if (argc - arg != 2) {
    fprintf(stderr, "usage: lim_write [--ignore-sigxfsz] PATH BYTES\n");
    return 2;
  }
  const long long want = strtoll(argv[arg + 1], NULL, 10);
  int fd = open(argv[arg], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    printf("wrote 0\nresult open %s\n", errno_name(errno));
    return 0;
  }
  static char chunk[65536];
  long long done = 0;
  int failure = 0;
  while (done < want) {
    size_t n = sizeof chunk;
    if ((long long)n > want - done) n = (size_t)(want - done);
    ssize_t w = write(fd, chunk, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      failure = errno;
      break;
    }
    done += w;
  }
  close(fd);
  printf("wrote %lld\nresult %s\n", done, failure == 0 ? "ok" : errno_name(failure));
  return 0;
}
