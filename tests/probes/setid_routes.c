/* setid_routes DIR [SETID_FILE]: tries every route by which a tool could leave a set-user-ID or
 * set-group-ID file, a file capability, a security.* / trusted.* extended attribute or a device
 * node in DIR (a writable bind), and prints one line per route, flushed at once:
 *   route=NAME result=ok|ERRNO_NAME
 * Every call is the raw system call named in the route (glibc's open() and creat() are openat,
 * its mknod() is mknodat), so each seccomp rule meets exactly its own syscall. A route NAME_0755
 * is the same call with a mode without the bits, on a file the probe made first: it must work,
 * so a refusal of NAME is the bits' and not the file's. SETID_FILE (a set-user-ID binary of the
 * host, seen in the jail) is linked and renamed into DIR. Exits 0 once every route was tried. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif
#ifndef SYS_setxattrat
#define SYS_setxattrat 463
#endif
#ifndef RENAME_WHITEOUT
#define RENAME_WHITEOUT (1 << 2)
#endif

/* setxattrat(2)'s argument (include/uapi/linux/xattr.h, 6.13), not in every libc's headers. */
struct probe_xattr_args {
  uint64_t value;
  uint32_t size;
  uint32_t flags;
};

static const char* dir;

static const char* errno_name(int e) {
  static char other[32];
  switch (e) {
    case EPERM:
      return "EPERM";
    case EACCES:
      return "EACCES";
    case ENOSYS:
      return "ENOSYS";
    case EOPNOTSUPP:
      return "EOPNOTSUPP";
    case EXDEV:
      return "EXDEV";
    case ENOENT:
      return "ENOENT";
    case EEXIST:
      return "EEXIST";
    case EROFS:
      return "EROFS";
    case EINVAL:
      return "EINVAL";
    case ENODATA:
      return "ENODATA";
    case EFAULT:
      return "EFAULT";
    case EBADF:
      return "EBADF";
    case ENOTDIR:
      return "ENOTDIR";
    case EISDIR:
      return "EISDIR";
    default:
      snprintf(other, sizeof other, "errno%d", e);
      return other;
  }
}

/* Prints the route's line for a call that returned `ret` (errno read right after it). */
static long report(const char* route, long ret) {
  int saved = errno;
  printf("route=%s result=%s\n", route, ret < 0 ? errno_name(saved) : "ok");
  fflush(stdout);
  return ret;
}

static const char* in_dir(const char* name) {
  static char paths[16][512];
  static int next;
  char* path = paths[next++ % 16];
  snprintf(path, sizeof paths[0], "%s/%s", dir, name);
  return path;
}

/* A plain file the tool owns, mode 0644; a failure here is printed as its own route. */
static int make_file(const char* name) {
  long fd =
      syscall(SYS_openat, AT_FDCWD, in_dir(name), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    char route[64];
    snprintf(route, sizeof route, "make_%s", name);
    report(route, fd);
    return -1;
  }
  (void)write((int)fd, "x\n", 2);
  return (int)fd;
}

static void close_fd(long fd) {
  if (fd >= 0) close((int)fd);
}

/* chmod, fchmod, fchmodat, fchmodat2: first 0755 (must work), then the set-id mode. */
static void chmod_routes(void) {
  close_fd(make_file("chmod"));
  report("chmod_0755", syscall(SYS_chmod, in_dir("chmod"), 0755));
  report("chmod", syscall(SYS_chmod, in_dir("chmod"), 04755));
  report("chmod_setgid", syscall(SYS_chmod, in_dir("chmod"), 02755));

  int fd = make_file("fchmod");
  report("fchmod_0755", syscall(SYS_fchmod, fd, 0755));
  report("fchmod", syscall(SYS_fchmod, fd, 04755));
  close_fd(fd);

  close_fd(make_file("fchmodat"));
  report("fchmodat_0755", syscall(SYS_fchmodat, AT_FDCWD, in_dir("fchmodat"), 0755));
  report("fchmodat", syscall(SYS_fchmodat, AT_FDCWD, in_dir("fchmodat"), 04755));

  close_fd(make_file("fchmodat2"));
  report("fchmodat2_0755", syscall(SYS_fchmodat2, AT_FDCWD, in_dir("fchmodat2"), 0755, 0));
  report("fchmodat2", syscall(SYS_fchmodat2, AT_FDCWD, in_dir("fchmodat2"), 04755, 0));
}

/* A new file whose creation mode carries S_ISUID. */
static void create_routes(void) {
  const int flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC;
  close_fd(report("open", syscall(SYS_open, in_dir("open"), flags, 04755)));
  close_fd(report("openat", syscall(SYS_openat, AT_FDCWD, in_dir("openat"), flags, 04755)));
  close_fd(report("creat", syscall(SYS_creat, in_dir("creat"), 04755)));

  /* An unnamed file made with the bits, then given a name in DIR. */
  long fd = report("open_tmpfile",
                   syscall(SYS_openat, AT_FDCWD, dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 04755));
  if (fd >= 0) {
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%ld", fd);
    report("open_tmpfile_link",
           linkat(AT_FDCWD, self, AT_FDCWD, in_dir("tmpfile"), AT_SYMLINK_FOLLOW));
    close_fd(fd);
  }

  /* openat2 takes flags and mode in a struct in memory. */
  struct open_how how;
  memset(&how, 0, sizeof how);
  how.flags = (uint64_t)flags;
  how.mode = 04755;
  close_fd(report("openat2", syscall(SYS_openat2, AT_FDCWD, in_dir("openat2"), &how, sizeof how)));
}

/* Device nodes (a real one, and an overlay whiteout: char 0:0) and a set-id regular file. */
static void mknod_routes(void) {
  report("mknod_chr", syscall(SYS_mknod, in_dir("null"), S_IFCHR | 0666, makedev(1, 3)));
  report("mknodat_blk",
         syscall(SYS_mknodat, AT_FDCWD, in_dir("blk"), S_IFBLK | 0666, makedev(7, 0)));
  report("mknod_whiteout", syscall(SYS_mknod, in_dir("whiteout"), S_IFCHR, makedev(0, 0)));
  report("mknodat_whiteout",
         syscall(SYS_mknodat, AT_FDCWD, in_dir("whiteout_at"), S_IFCHR, makedev(0, 0)));
  close_fd(make_file("wsrc"));
  report("renameat2_whiteout", syscall(SYS_renameat2, AT_FDCWD, in_dir("wsrc"), AT_FDCWD,
                                       in_dir("wdst"), RENAME_WHITEOUT));
  report("mknod_setuid", syscall(SYS_mknod, in_dir("mknod"), S_IFREG | 04755, 0));
  report("mknodat_setuid", syscall(SYS_mknodat, AT_FDCWD, in_dir("mknodat"), S_IFREG | 04755, 0));
  report("mknod_fifo", syscall(SYS_mknod, in_dir("fifo"), S_IFIFO | 0644, 0));
}

/* File capabilities and security.* / trusted.* / user.* attributes. */
static void xattr_routes(void) {
  /* A valid v2 capability set: cap_setuid,cap_setgid+ep. */
  struct vfs_cap_data cap;
  memset(&cap, 0, sizeof cap);
  cap.magic_etc = VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE;
  cap.data[0].permitted = (1u << CAP_SETUID) | (1u << CAP_SETGID);
  const char* file = in_dir("xattr");
  int fd = make_file("xattr");
  syscall(SYS_fchmod, fd, 0755);
  report("setxattr_capability",
         syscall(SYS_setxattr, file, "security.capability", &cap, XATTR_CAPS_SZ_2, 0));
  report("lsetxattr_capability",
         syscall(SYS_lsetxattr, file, "security.capability", &cap, XATTR_CAPS_SZ_2, 0));
  report("fsetxattr_capability",
         syscall(SYS_fsetxattr, fd, "security.capability", &cap, XATTR_CAPS_SZ_2, 0));
  report("setxattr_trusted", syscall(SYS_setxattr, file, "trusted.x", "1", 1, 0));
  report("setxattr_user", syscall(SYS_setxattr, file, "user.x", "1", 1, 0));
  struct probe_xattr_args args = {(uint64_t)(uintptr_t)&cap, XATTR_CAPS_SZ_2, 0};
  report("setxattrat_capability",
         syscall(SYS_setxattrat, AT_FDCWD, file, 0, "security.capability", &args, sizeof args));
  args.value = (uint64_t)(uintptr_t) "1";
  args.size = 1;
  report("setxattrat_user",
         syscall(SYS_setxattrat, AT_FDCWD, file, 0, "user.x", &args, sizeof args));
  close_fd(fd);
}

/* A set-id file of the host brought into DIR by name: link, flink (AT_EMPTY_PATH), rename. And
 * a file of DIR renamed over another: the result carries the bits of neither, having none. */
static void name_routes(const char* setid) {
  close_fd(make_file("a"));
  report("rename_over_0755", syscall(SYS_chmod, in_dir("a"), 0755));
  close_fd(make_file("b"));
  report("rename_over_chmod", syscall(SYS_chmod, in_dir("b"), 04755));
  report("rename_over", syscall(SYS_rename, in_dir("b"), in_dir("a")));
  if (setid == NULL) return;
  report("link_setid", syscall(SYS_link, setid, in_dir("link")));
  long fd = syscall(SYS_open, setid, O_PATH | O_CLOEXEC);
  if (fd >= 0) {
    report("linkat_empty_path_setid",
           syscall(SYS_linkat, fd, "", AT_FDCWD, in_dir("flink"), AT_EMPTY_PATH));
    close_fd(fd);
  } else {
    report("open_setid", fd);
  }
  report("rename_setid", syscall(SYS_rename, setid, in_dir("renamed")));
  report("rename_over_setid", syscall(SYS_rename, setid, in_dir("a")));
}

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: setid_routes DIR [SETID_FILE]\n");
    return 2;
  }
  dir = argv[1];
  umask(0);
  chmod_routes();
  create_routes();
  mknod_routes();
  xattr_routes();
  name_routes(argc == 3 ? argv[2] : NULL);
  printf("done\n");
  return 0;
}
