/* lim_forkbomb SECONDS: a real fork bomb with an end. Every process forks as fast as it can,
 * and so does every child, until SECONDS of wall time have passed since the first one started;
 * then each exits. The first process prints "bomb failures N" (its own failed forks), reaps its
 * children and exits 0. Run it only inside a jail whose pids limit was just shown to hold. */
#include <stdio.h>
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
  if (argc != 2) {
    fprintf(stderr, "usage: lim_forkbomb SECONDS\n");
    return 2;
  }
  const double end = now() + strtod(argv[1], NULL);
  const pid_t first = getpid();
  long failures = 0;
  while (now() < end) {
    pid_t pid = fork();
    if (pid < 0) ++failures;
    /* A child simply carries on with the same loop. */
  }
  if (getpid() != first) _exit(0);
  printf("bomb failures %ld\n", failures);
  fflush(stdout);
  while (wait(NULL) > 0) {
  }
  return 0;
}
