// Run on the host, around jail rather than inside it: `refusing NR[:ARG0] ERRNO COMMAND [ARGS...]`
// runs COMMAND with system call NR (when ARG0 is given, only with that first argument) failing
// with ERRNO, for every process it starts. The tests of jail's own setup use it to make a step
// fail that the host never fails otherwise, and check that the failure is named.
//
// No architecture check: the filter is for the 64-bit jail and what it starts, whose numbers
// are the ones the test passes.
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: refusing NR[:ARG0] ERRNO COMMAND [ARGS...]\n");
    return 2;
  }
  char* rest = NULL;
  const unsigned long number = strtoul(argv[1], &rest, 10);
  const int with_argument = *rest == ':';
  const unsigned long argument = with_argument ? strtoul(rest + 1, NULL, 10) : 0;
  const unsigned int err = (unsigned int)strtoul(argv[2], NULL, 10) & SECCOMP_RET_DATA;
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)number, 0, 4),
      // The low half of the first argument (little-endian): enough for the flags tested.
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)argument, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, with_argument ? SECCOMP_RET_ALLOW : SECCOMP_RET_ERRNO | err),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | err),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog program = {sizeof filter / sizeof filter[0], filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
    fprintf(stderr, "refusing: cannot install the filter: %s\n", strerror(errno));
    return 2;
  }
  execvp(argv[3], argv + 3);
  fprintf(stderr, "refusing: cannot run %s: %s\n", argv[3], strerror(errno));
  return 127;
}
