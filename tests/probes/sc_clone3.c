/* clone3 under a jail: a raw clone3 with valid arguments (plain, and asking for a new user
 * namespace) and what glibc does on top of it (fork, a thread). Prints one line each:
 *   clone3 ret=R errno=E | clone3_newuser ret=R errno=E | fork status=S | thread ok */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/sched.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void raw_clone3(const char* label, uint64_t flags) {
  struct clone_args args;
  memset(&args, 0, sizeof args);
  args.flags = flags;
  args.exit_signal = SIGCHLD;
  errno = 0;
  long ret = syscall(SYS_clone3, &args, sizeof args);
  if (ret == 0) _exit(0);
  int saved = ret == -1 ? errno : 0;
  if (ret > 0) waitpid((pid_t)ret, NULL, 0);
  printf("%s ret=%ld errno=%d\n", label, ret, saved);
  fflush(stdout);
}

static void* nothing(void* unused) {
  return unused;
}

int main(void) {
  raw_clone3("clone3", 0);
  raw_clone3("clone3_newuser", CLONE_NEWUSER);
  pid_t child = fork();
  if (child == 0) _exit(7);
  int status = -1;
  if (child > 0) waitpid(child, &status, 0);
  printf("fork status=%d\n", child > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  fflush(stdout);
  pthread_t thread;
  int rc = pthread_create(&thread, NULL, nothing, NULL);
  if (rc == 0) pthread_join(thread, NULL);
  if (rc == 0) {
    printf("thread ok\n");
  } else {
    printf("thread failed %d\n", rc);
  }
  return 0;
}
