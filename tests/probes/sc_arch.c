/* Makes getpid through a foreign system call ABI: `sc_arch x32` sets the x32 bit (0x40000000)
 * on the native number, `sc_arch i386` enters the kernel with `int $0x80` (i386 getpid is 20).
 * Prints "before MODE", then "after MODE ret=R" if the call came back. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define X32_BIT 0x40000000L
#define I386_GETPID 20L

int main(int argc, char** argv) {
  if (argc != 2 || (strcmp(argv[1], "x32") != 0 && strcmp(argv[1], "i386") != 0)) {
    fprintf(stderr, "usage: sc_arch x32|i386\n");
    return 2;
  }
  printf("before %s\n", argv[1]);
  fflush(stdout);
  long ret;
  int err = 0;
  if (strcmp(argv[1], "x32") == 0) {
    errno = 0;
    ret = syscall(X32_BIT | SYS_getpid);
    err = ret == -1 ? errno : 0;
  } else {
    ret = I386_GETPID;
    __asm__ volatile("int $0x80" : "+a"(ret) : : "memory", "r8", "r9", "r10", "r11");
  }
  printf("after %s ret=%ld errno=%d\n", argv[1], ret, err);
  fflush(stdout);
  return 0;
}
