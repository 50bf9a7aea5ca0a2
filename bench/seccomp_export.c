/* Writes a libseccomp-compiled filter, as raw BPF, to stdout: every syscall allowed except a
 * few refused with EPERM (so the program has a real syscall dispatch, as Docker's does). bwrap
 * loads it with --seccomp FD in bench/syscall.sh: the same kernel filter entry, without jail.
 *
 *   seccomp_export > filter.bpf */
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (ctx == NULL) return 1;
  const int refused[] = {SCMP_SYS(kexec_load), SCMP_SYS(init_module), SCMP_SYS(reboot),
                         SCMP_SYS(swapon),     SCMP_SYS(mount),       SCMP_SYS(ptrace)};
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; ++i) {
    if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), refused[i], 0) != 0) return 1;
  }
  const int rc = seccomp_export_bpf(ctx, STDOUT_FILENO);
  seccomp_release(ctx);
  if (rc != 0) {
    fprintf(stderr, "seccomp_export_bpf: %d\n", rc);
    return 1;
  }
  return 0;
}
