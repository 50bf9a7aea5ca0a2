/* lim_nofile: opens /dev/null until open fails. Prints "opened N" (successful opens), "last_fd F"
 * (the highest descriptor obtained, -1 if none) and "result NAME" (EMFILE, ...). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void) {
  long opened = 0;
  int last = -1;
  int failure = 0;
  while (opened < 1000000) {
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      failure = errno;
      break;
    }
    last = fd;
    ++opened;
  }
  printf("opened %ld\nlast_fd %d\nresult %s\n", opened, last,
         failure == EMFILE ? "EMFILE" : (failure == 0 ? "none" : strerror(failure)));
  return 0;
}
