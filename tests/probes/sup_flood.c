/* sup_flood THREADS SECONDS: THREADS threads call sethostname (refused with EPERM under the
 * default policy, so each call is a round trip to jail's supervisor) as fast as they can, each
 * time with another length, for SECONDS (0: until killed). Prints "flooding" once they run,
 * then the calls made and how they were refused. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static atomic_long calls;
static atomic_long refused_eperm;
static atomic_int stop;

static void* flood(void* unused) {
  (void)unused;
  static const char name[] = "flood-flood-flood-flood-flood";
  for (long i = 0; !atomic_load(&stop); ++i) {
    long ret = syscall(SYS_sethostname, name, (long)(1 + i % (sizeof name - 1)));
    atomic_fetch_add(&calls, 1);
    if (ret < 0 && errno == EPERM) atomic_fetch_add(&refused_eperm, 1);
  }
  return NULL;
}

int main(int argc, char** argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  int seconds = argc > 2 ? atoi(argv[2]) : 0;
  if (threads < 1 || threads > 64) return 2;
  pthread_t ids[64];
  for (int i = 0; i < threads; ++i) {
    if (pthread_create(&ids[i], NULL, flood, NULL) != 0) return 2;
  }
  printf("flooding\n");
  fflush(stdout);
  if (seconds == 0) {
    for (;;) pause();
  }
  sleep((unsigned)seconds);
  atomic_store(&stop, 1);
  for (int i = 0; i < threads; ++i) pthread_join(ids[i], NULL);
  printf("calls %ld refused %ld\n", atomic_load(&calls), atomic_load(&refused_eperm));
  return 0;
}
