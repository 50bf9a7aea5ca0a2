/* A second thread calls ptrace(PTRACE_ATTACH, 1) while the main thread keeps printing
 * "tick N" every 10 ms. Under a policy that kills ptrace the whole process must end: the
 * thread never prints "ptrace returned" and the main thread never reaches "survived". */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void* attach(void* unused) {
  (void)unused;
  struct timespec delay = {0, 50 * 1000 * 1000};
  nanosleep(&delay, NULL);
  printf("thread calling ptrace\n");
  fflush(stdout);
  errno = 0;
  long ret = syscall(SYS_ptrace, PTRACE_ATTACH, 1L, 0L, 0L);
  printf("ptrace returned ret=%ld errno=%d\n", ret, errno);
  fflush(stdout);
  return NULL;
}

int main(void) {
  pthread_t thread;
  if (pthread_create(&thread, NULL, attach, NULL) != 0) {
    printf("pthread_create failed\n");
    return 2;
  }
  for (int i = 0; i < 300; ++i) {
    printf("tick %d\n", i);
    fflush(stdout);
    struct timespec delay = {0, 10 * 1000 * 1000};
    nanosleep(&delay, NULL);
  }
  pthread_join(thread, NULL);
  printf("survived\n");
  return 0;
}
