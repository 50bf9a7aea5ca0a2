/* quota_inotify: opens inotify instances until refused, holds them, and says how many it got:
 * "held N (ERRNO)" then "READY", then sleeps until killed. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

int main(void) {
  int held = 0;
  int failure = 0;
  while (held < 100000) {
    if (inotify_init1(IN_CLOEXEC) < 0) {
      failure = errno;
      break;
    }
    ++held;
  }
  printf("held %d (%s)\nREADY\n", held, failure == EMFILE ? "EMFILE" : strerror(failure));
  fflush(stdout);
  for (;;) pause();
}
