/* sup_spray IOCTLS UNKNOWN [check]: what a tool under `jail policy learn` sprays to bloat it:
 * IOCTLS ioctls with as many distinct requests, then UNKNOWN calls of syscall numbers no table
 * knows. With "check" it sprays nothing and reports what a learned policy does with a call the
 * spraying run never made: ptrace, and an ioctl request outside those sprayed. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char** argv) {
  long ioctls = argc > 1 ? atol(argv[1]) : 0;
  long unknown = argc > 2 ? atol(argv[2]) : 0;
  int check = argc > 3 && strcmp(argv[3], "check") == 0;
  for (long i = 0; i < ioctls; ++i) (void)ioctl(-1, (unsigned long)(0x10000 + i), 0);
  for (long i = 0; i < unknown; ++i) (void)syscall(1000 + i, 0, 0, 0);
  printf("sprayed %ld %ld\n", ioctls, unknown);
  if (check) {
    errno = 0;
    long ret = syscall(SYS_ptrace, PTRACE_TRACEME, 0L, 0L, 0L);
    printf("ptrace ret=%ld errno=%d\n", ret, errno);
    errno = 0;
    ret = ioctl(-1, 0x7fff0000UL, 0);
    printf("unused ioctl ret=%ld errno=%d\n", ret, errno);
  }
  fflush(stdout);
  return 0;
}
