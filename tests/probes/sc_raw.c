/* Makes raw system calls given on the command line and prints what each returned, so a test
 * sees exactly what a seccomp policy decided:
 *   sc_raw NR [ARG...] [, NR [ARG...]]...
 * Numbers are C literals (42, 0x5412, -1). Before each call it prints "calling K nr=N" and
 * after it "result K ret=R errno=E", both flushed at once: a call that kills the process leaves
 * its "calling" line and no "result" line. Ends with "done". A call that forks (clone, fork)
 * ends the child at once. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long parse(const char* text) {
  char* end = NULL;
  errno = 0;
  long value = text[0] == '-' ? strtol(text, &end, 0) : (long)strtoul(text, &end, 0);
  if (errno != 0 || end == text || *end != '\0') {
    fprintf(stderr, "sc_raw: not a number: %s\n", text);
    exit(2);
  }
  return value;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: sc_raw NR [ARG...] [, NR [ARG...]]...\n");
    return 2;
  }
  const pid_t self = getpid();
  int index = 0;
  for (int i = 1; i < argc;) {
    long nr = parse(argv[i++]);
    long args[6] = {0, 0, 0, 0, 0, 0};
    int count = 0;
    while (i < argc && strcmp(argv[i], ",") != 0) {
      if (count == 6) {
        fprintf(stderr, "sc_raw: more than 6 arguments\n");
        return 2;
      }
      args[count++] = parse(argv[i++]);
    }
    if (i < argc) ++i; /* the "," */
    printf("calling %d nr=%ld\n", index, nr);
    fflush(stdout);
    errno = 0;
    long ret = syscall(nr, args[0], args[1], args[2], args[3], args[4], args[5]);
    int saved = errno;
    if (getpid() != self) _exit(0);
    printf("result %d ret=%ld errno=%d\n", index, ret, ret == -1 ? saved : 0);
    fflush(stdout);
    ++index;
  }
  printf("done\n");
  return 0;
}
