/* Looks up DIR/<name> with each call that can stop at a symlink at the end of the path, each
 * with the flag that makes it stop there; DIR/stat with stat(), which follows it; and
 * DIR/lstat-then-stat with both:
 *   nofollow_lookups DIR
 * Raw system calls, so that the call and its flags are exactly those named, whatever the C
 * library makes of lstat() or open(). What each returns does not matter (ELOOP from O_NOFOLLOW
 * on a link is expected); the lookups are what `jail rootfs check` records. Ends with "done". */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static char path[4096];

static const char* in(const char* dir, const char* name) {
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return path;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: nofollow_lookups DIR\n");
    return 2;
  }
  const char* dir = argv[1];
  struct stat st;
  struct statx stx;
  char text[256];
  char* const no_args[] = {NULL};
  syscall(SYS_lstat, in(dir, "lstat"), &st);
  syscall(SYS_newfstatat, AT_FDCWD, in(dir, "newfstatat"), &st, AT_SYMLINK_NOFOLLOW);
  syscall(SYS_statx, AT_FDCWD, in(dir, "statx"), AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &stx);
  syscall(SYS_faccessat2, AT_FDCWD, in(dir, "faccessat2"), F_OK, AT_SYMLINK_NOFOLLOW);
  syscall(SYS_readlink, in(dir, "readlink"), text, sizeof text);
  syscall(SYS_readlinkat, AT_FDCWD, in(dir, "readlinkat"), text, sizeof text);
  syscall(SYS_execveat, AT_FDCWD, in(dir, "execveat"), no_args, no_args, AT_SYMLINK_NOFOLLOW);
  long fd = syscall(SYS_open, in(dir, "open"), O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) close((int)fd);
  fd = syscall(SYS_openat, AT_FDCWD, in(dir, "openat"), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) close((int)fd);
  fd = syscall(SYS_openat, AT_FDCWD, in(dir, "openat-excl"), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd >= 0) close((int)fd);
  struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC};
  fd = syscall(SYS_openat2, AT_FDCWD, in(dir, "openat2"), &how, sizeof how);
  if (fd >= 0) close((int)fd);
  struct open_how no_links = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS};
  fd = syscall(SYS_openat2, AT_FDCWD, in(dir, "openat2-resolve"), &no_links, sizeof no_links);
  if (fd >= 0) close((int)fd);
  syscall(SYS_stat, in(dir, "stat"), &st);
  syscall(SYS_lstat, in(dir, "lstat-then-stat"), &st);
  syscall(SYS_stat, in(dir, "lstat-then-stat"), &st);
  printf("done\n");
  return 0;
}
