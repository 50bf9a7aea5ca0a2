/* Calls getpriority(0, 0, 7) with a SIGSYS handler installed, for a policy that says
 * `trap getpriority if arg2 == 7`. Prints "calling", then "handler saw syscall N" from the
 * handler and "returned ret=R errno=E" if the call came back, then "done". */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void on_sigsys(int sig, siginfo_t* info, void* context) {
  (void)sig;
  (void)context;
  char line[64];
  int n = snprintf(line, sizeof line, "handler saw syscall %d\n", info->si_syscall);
  if (n > 0) (void)!write(STDOUT_FILENO, line, (size_t)n);
}

int main(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = on_sigsys;
  action.sa_flags = SA_SIGINFO;
  if (sigaction(SIGSYS, &action, NULL) != 0) {
    perror("sc_trap: sigaction");
    return 2;
  }
  printf("calling\n");
  fflush(stdout);
  errno = 0;
  long ret = syscall(SYS_getpriority, 0L, 0L, 7L);
  printf("returned ret=%ld errno=%d\n", ret, ret == -1 ? errno : 0);
  printf("done\n");
  return 0;
}
