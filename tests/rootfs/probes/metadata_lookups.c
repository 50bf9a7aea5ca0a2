/* Changes the times, owner or mode of DIR/<call> with each call that does so by path (each one
 * following the final link), and of an open file through the calls' fd forms, which look
 * nothing up:
 *   metadata_lookups DIR
 * Raw system calls, so that each call named is the one made. The owner and mode asked for are
 * "unchanged" (-1) or what a missing file cannot have anyway: these run on paths the root lacks
 * and fail with ENOENT, and the lookups are what `jail rootfs check` records. Ends with "done". */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>
#include <utime.h>

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

static char path[4096];

static const char* in(const char* dir, const char* name) {
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return path;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: metadata_lookups DIR\n");
    return 2;
  }
  const char* dir = argv[1];
  syscall(SYS_utimensat, AT_FDCWD, in(dir, "utimensat"), NULL, 0);
  syscall(SYS_futimesat, AT_FDCWD, in(dir, "futimesat"), NULL);
  syscall(SYS_utime, in(dir, "utime"), NULL);
  syscall(SYS_utimes, in(dir, "utimes"), NULL);
  syscall(SYS_fchownat, AT_FDCWD, in(dir, "fchownat"), -1, -1, 0);
  syscall(SYS_chown, in(dir, "chown"), -1, -1);
  syscall(SYS_lchown, in(dir, "lchown"), -1, -1);
  syscall(SYS_fchmodat, AT_FDCWD, in(dir, "fchmodat"), 0644);
  syscall(SYS_fchmodat2, AT_FDCWD, in(dir, "fchmodat2"), 0644, 0);
  syscall(SYS_chmod, in(dir, "chmod"), 0644);
  syscall(SYS_truncate, in(dir, "truncate"), 0);
  /* The fd forms: futimens is utimensat(fd, NULL), and AT_EMPTY_PATH acts on the fd. */
  int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    syscall(SYS_utimensat, fd, NULL, NULL, 0);
    syscall(SYS_futimesat, fd, NULL, NULL);
    syscall(SYS_fchownat, fd, "", -1, -1, AT_EMPTY_PATH);
    close(fd);
  }
  printf("done\n");
  return 0;
}
