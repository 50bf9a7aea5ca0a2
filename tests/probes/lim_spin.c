/* lim_spin SECONDS [PROCS]: PROCS processes (default 1) each burn CPU until SECONDS of wall time
 * have passed, then exit; with SECONDS 0 they spin until killed. Prints nothing. */
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? strtod(argv[1], NULL) : 0;
  const long procs = argc > 2 ? strtol(argv[2], NULL, 10) : 1;
  const double end = now() + seconds;
  for (long i = 1; i < procs; ++i) {
    if (fork() == 0) break;
  }
  volatile unsigned long sink = 0;
  while (seconds <= 0 || now() < end) {
    for (int i = 0; i < 100000; ++i) sink += (unsigned long)i;
  }
  while (wait(NULL) > 0) {
  }
  return 0;
}
