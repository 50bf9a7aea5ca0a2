/* lim_forks MAX: forks up to MAX children that stay alive (each blocks reading a pipe) and stops
 * at the first failed fork. Prints "forked N" and then "errno NAME" (or "errno none" when all MAX
 * succeeded), lets the children go, reaps them and exits 0. Harmless: it never exceeds MAX. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char* errno_name(int e) {
  switch (e) {
    case 0:
      return "none";
    case EAGAIN:
      return "EAGAIN";
    case ENOMEM:
      return "ENOMEM";
    default:
      return strerror(e);
  }
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: lim_forks MAX\n");
    return 2;
  }
  long max = strtol(argv[1], NULL, 10);
  int gate[2];
  if (pipe(gate) != 0) return 3;
  long forked = 0;
  int failure = 0;
  while (forked < max) {
    pid_t pid = fork();
    if (pid < 0) {
      failure = errno;
      break;
    }
    if (pid == 0) {
      char c;
      close(gate[1]);
      /* Returns at EOF, when the parent closes its end. */
      while (read(gate[0], &c, 1) < 0 && errno == EINTR) {
      }
      _exit(0);
    }
    ++forked;
  }
  printf("forked %ld\nerrno %s\n", forked, errno_name(failure));
  fflush(stdout);
  close(gate[1]);
  while (wait(NULL) > 0 || errno == EINTR) {
  }
  return 0;
}
