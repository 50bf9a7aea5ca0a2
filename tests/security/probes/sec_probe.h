/* Shared by the security probes: every attempt prints one line "NAME=RESULT", where RESULT is
 * OK when the call succeeded and the errno name (EPERM, ENOENT, ...) when it failed, flushed at
 * once so that a call that kills the process leaves every earlier line behind. */
#ifndef SEC_PROBE_H
#define SEC_PROBE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline void report(const char* name, long rc, int err) {
  if (rc >= 0) {
    printf("%s=OK\n", name);
  } else {
    const char* e = strerrorname_np(err);
    printf("%s=%s\n", name, e != NULL ? e : "E?");
  }
  fflush(stdout);
}

/* Makes the call (or takes the result of the call just made), then reads errno: errno passed
 * as an argument beside the call could be read first, since C leaves the order open. */
#define TRY(name, call)                \
  do {                                 \
    long try_rc_ = (long)(call);       \
    int try_errno_ = errno;            \
    report(name, try_rc_, try_errno_); \
  } while (0)

static inline void say(const char* name, const char* value) {
  printf("%s=%s\n", name, value);
  fflush(stdout);
}

struct probe_mode {
  const char* name;
  int (*run)(int argc, char** argv); /* argv[0] is the mode */
};

static inline int dispatch(const char* program, const struct probe_mode* modes, int argc,
                           char** argv) {
  if (argc >= 2) {
    for (const struct probe_mode* m = modes; m->name != NULL; ++m) {
      if (strcmp(argv[1], m->name) == 0) return m->run(argc - 1, argv + 1);
    }
  }
  fprintf(stderr, "usage: %s MODE [ARGS...]; modes:", program);
  for (const struct probe_mode* m = modes; m->name != NULL; ++m) fprintf(stderr, " %s", m->name);
  fprintf(stderr, "\n");
  return 2;
}

#endif
