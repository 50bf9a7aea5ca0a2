/* Syscall-heavy loop: getppid() and a 1-byte read() from /dev/zero, ITERATIONS times; prints the
 * CPU nanoseconds per iteration (one getppid + one read) measured inside the process, so neither
 * start-up nor time spent waiting for a busy CPU is part of it. Run inside and outside a jail by
 * bench/syscall.sh.
 *
 *   syscall [ITERATIONS]   (default 2000000) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char** argv) {
  const long iterations = argc > 1 ? atol(argv[1]) : 2000000;
  const int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    perror("open /dev/zero");
    return 1;
  }
  char byte;
  struct timespec t0, t1;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
  for (long i = 0; i < iterations; ++i) {
    getppid();
    if (read(fd, &byte, 1) != 1) {
      perror("read");
      return 1;
    }
  }
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
  const double ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
  printf("%.1f\n", ns / (double)iterations);
  return 0;
}
