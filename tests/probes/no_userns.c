// Run on the host, around jail: `no_userns COMMAND [ARGS...]` runs COMMAND where no user
// namespace can be made, as in a container under Docker's default seccomp profile or on a host
// with user.max_user_namespaces = 0: unshare and clone with CLONE_NEWUSER fail with EPERM, and
// clone3 (whose flags a filter cannot read) with ENOSYS, so that the C library falls back to
// clone. The Landlock mode's tests run jail this way.
// `no_userns --caps-less COMMAND [ARGS...]` plays Ubuntu's restriction instead: the user
// namespace is made, but every mount call fails with EPERM, as it does in a namespace that
// AppArmor left without capabilities.
// `no_userns --keyring-join-refused COMMAND [ARGS...]` also refuses keyctl(KEYCTL_JOIN_SESSION_
// KEYRING) with EPERM, and only that: a profile that refuses the join but would let the caller's
// session keyring be read if the jail went on in it.
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/keyctl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: no_userns [--caps-less | --keyring-join-refused] COMMAND [ARGS...]\n");
    return 2;
  }
  const int caps_less = strcmp(argv[1], "--caps-less") == 0;
  if (caps_less) ++argv;
  const int keyring = strcmp(argv[1], "--keyring-join-refused") == 0;
  if (keyring) ++argv;
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unshare, 1, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 3),
      // Both take their flags first; CLONE_NEWUSER is in the low half.
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
      BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NEWUSER, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_filter mounts[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mount, 8, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_umount2, 7, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pivot_root, 6, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_open_tree, 5, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_move_mount, 4, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_fsopen, 3, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_fsmount, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mount_setattr, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
  };
  struct sock_filter join[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_keyctl, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, KEYCTL_JOIN_SESSION_KEYRING, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog join_program = {sizeof join / sizeof join[0], join};
  struct sock_fprog program = {sizeof filter / sizeof filter[0], filter};
  if (caps_less) {
    program.len = sizeof mounts / sizeof mounts[0];
    program.filter = mounts;
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0 ||
      (keyring && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &join_program) != 0)) {
    fprintf(stderr, "no_userns: cannot install the filter: %s\n", strerror(errno));
    return 2;
  }
  execvp(argv[1], argv + 1);
  fprintf(stderr, "no_userns: cannot run %s: %s\n", argv[1], strerror(errno));
  return 127;
}
