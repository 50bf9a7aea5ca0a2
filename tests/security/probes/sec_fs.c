/* Filesystem escape attempts, one mode per family; see tests/security/README.md.
 *   sec_fs exe                 overwrite the running binary and PID 1's through /proc
 * (CVE-2019-5736) sec_fs fds N               leaked descriptors; fd N and /proc/self/fd/N as cwd
 * (CVE-2024-21626) sec_fs proc1 PATH          reach host PATH through /proc/1/root; /proc/1/cwd,
 * /proc/1/mem sec_fs procsys             write /proc/sys, /proc/sysrq-trigger, /sys sec_fs mknod
 * make device nodes, open raw devices sec_fs remount             make the read-only root and /proc
 * writable again sec_fs userns_remount      the same from a nested user+mount namespace (no policy
 * only) sec_fs propagate TARGET    mount a tmpfs named jail-sec-propagation inside; sleeps 2 s
 *   sec_fs link SRC DST        hard-link SRC to DST, then try to write SRC
 *   sec_fs whoami              ids, capabilities, no_new_privs (run as a setuid binary) */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sec_probe.h"

static int mode_exe(int argc, char** argv) {
  (void)argc;
  (void)argv;
  int fd = open("/proc/self/exe", O_WRONLY | O_CLOEXEC);
  TRY("open_self_exe_w", fd);
  fd = open("/proc/1/exe", O_WRONLY | O_CLOEXEC);
  TRY("open_init_exe_w", fd);
  char target[4096] = {0};
  ssize_t n = readlink("/proc/1/exe", target, sizeof target - 1);
  TRY("readlink_init_exe", n);
  if (n >= 0) say("init_exe", target);
  fd = open("/proc/1/exe", O_RDONLY | O_CLOEXEC);
  TRY("open_init_exe_r", fd);
  /* The runc attack: an O_PATH/O_RDONLY handle reopened for writing once the binary stops. */
  int self = open("/proc/self/exe", O_PATH | O_CLOEXEC);
  TRY("open_self_exe_path", self);
  if (self >= 0) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", self);
    int w = open(path, O_WRONLY | O_CLOEXEC);
    TRY("reopen_self_exe_w", w);
  }
  return 0;
}

static int mode_fds(int argc, char** argv) {
  int wanted = argc > 1 ? atoi(argv[1]) : 7;
  char list[4096] = "";
  DIR* dir = opendir("/proc/self/fd");
  if (dir != NULL) {
    const struct dirent* e;
    while ((e = readdir(dir)) != NULL) {
      int fd = atoi(e->d_name);
      if (e->d_name[0] < '0' || e->d_name[0] > '9' || fd == dirfd(dir) || fd <= 2) continue;
      size_t len = strlen(list);
      snprintf(list + len, sizeof list - len, "%s%d", len ? "," : "", fd);
    }
    closedir(dir);
  }
  say("extra_fds", list[0] ? list : "none");
  struct stat st;
  TRY("fstat_wanted", fstat(wanted, &st));
  TRY("fchdir_wanted", fchdir(wanted));
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", wanted);
  TRY("chdir_proc_fd", chdir(path));
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd) != NULL) {
    say("cwd", cwd);
  } else {
    TRY("getcwd", -1); /* ENOENT: "(unreachable)", the runc symptom */
  }
  /* From a leaked host directory, ../../.. would walk the host tree. */
  TRY("open_dotdot_shadow", open("../../../../../../etc/shadow", O_RDONLY | O_CLOEXEC));
  return 0;
}

static int mode_proc1(int argc, char** argv) {
  const char* marker = argc > 1 ? argv[1] : "/etc/shadow";
  char path[4096];
  snprintf(path, sizeof path, "/proc/1/root%s", marker);
  TRY("open_proc1_root_marker", open(path, O_RDONLY | O_CLOEXEC));
  struct stat root, init_root;
  int a = stat("/", &root);
  int b = stat("/proc/1/root/", &init_root);
  TRY("stat_proc1_root", b);
  if (a == 0 && b == 0) {
    say("proc1_root_is_own_root",
        root.st_dev == init_root.st_dev && root.st_ino == init_root.st_ino ? "yes" : "no");
  }
  char link[4096] = {0};
  ssize_t n = readlink("/proc/1/cwd", link, sizeof link - 1);
  TRY("readlink_proc1_cwd", n);
  if (n >= 0) say("proc1_cwd", link);
  TRY("open_proc1_mem_rw", open("/proc/1/mem", O_RDWR | O_CLOEXEC));
  TRY("open_proc1_environ", open("/proc/1/environ", O_RDONLY | O_CLOEXEC));
  return 0;
}

static int mode_procsys(int argc, char** argv) {
  (void)argc;
  (void)argv;
  static const char* const targets[] = {"/proc/sys/kernel/core_pattern",
                                        "/proc/sys/kernel/hostname",
                                        "/proc/sys/vm/drop_caches",
                                        "/proc/sys/kernel/modprobe",
                                        "/proc/sysrq-trigger",
                                        "/sys/kernel/uevent_helper",
                                        "/sys/power/state",
                                        "/proc/self/attr/current",
                                        NULL};
  for (const char* const* t = targets; *t != NULL; ++t) {
    int fd = open(*t, O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
      /* Opened: the write must still fail. Write nothing harmful: an empty line. */
      ssize_t w = write(fd, "\n", 1);
      TRY(*t, w);
      close(fd);
    } else {
      TRY(*t, -1);
    }
  }
  struct stat st;
  TRY("stat_sys_fs_cgroup", stat("/sys/fs/cgroup", &st));
  return 0;
}

static int mode_mknod(int argc, char** argv) {
  (void)argc;
  (void)argv;
  TRY("mknod_block_sda", mknod("/tmp/sda", S_IFBLK | 0600, makedev(8, 0)));
  TRY("mknod_char_mem", mknod("/tmp/mem", S_IFCHR | 0600, makedev(1, 1)));
  /* Where mknod is allowed (gVisor's own tmpfs), the node must not reach a device. */
  TRY("open_created_sda", open("/tmp/sda", O_RDONLY | O_CLOEXEC));
  TRY("open_created_mem", open("/tmp/mem", O_RDONLY | O_CLOEXEC));
  TRY("mknod_char_kmsg", mknod("/tmp/kmsg", S_IFCHR | 0600, makedev(1, 11)));
  TRY("open_dev_mem", open("/dev/mem", O_RDONLY | O_CLOEXEC));
  TRY("open_dev_sda", open("/dev/sda", O_RDONLY | O_CLOEXEC));
  TRY("open_dev_vda", open("/dev/vda", O_RDONLY | O_CLOEXEC));
  TRY("mknod_fifo", mknod("/tmp/fifo", S_IFIFO | 0600, 0));
  return 0;
}

static void try_remounts(void) {
  TRY("remount_root_rw", mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND, NULL));
  TRY("remount_usr_rw", mount(NULL, "/usr", NULL, MS_REMOUNT | MS_BIND, NULL));
  TRY("remount_proc_suid", mount(NULL, "/proc", NULL, MS_REMOUNT | MS_BIND, NULL));
  struct mount_attr attr = {.attr_clr = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID};
  TRY("mount_setattr_clear_rdonly",
      syscall(SYS_mount_setattr, -1, "/", AT_RECURSIVE, &attr, sizeof attr));
  TRY("write_root", open("/jail-sec-written", O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
  TRY("write_usr", open("/usr/jail-sec-written", O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
}

static int mode_remount(int argc, char** argv) {
  (void)argc;
  (void)argv;
  try_remounts();
  return 0;
}

static int mode_userns_remount(int argc, char** argv) {
  (void)argc;
  (void)argv;
  /* In a namespace of its own the tool holds every capability, yet the kernel keeps the
   * inherited mounts' read-only flags locked (MNT_LOCK_READONLY). */
  TRY("unshare_user_mount", unshare(CLONE_NEWUSER | CLONE_NEWNS));
  try_remounts();
  return 0;
}

static int mode_propagate(int argc, char** argv) {
  const char* target = argc > 1 ? argv[1] : "/tmp";
  TRY("mount_tmpfs_direct", mount("jail-sec-propagation", target, "tmpfs", 0, "size=64k"));
  TRY("unshare_user_mount", unshare(CLONE_NEWUSER | CLONE_NEWNS));
  TRY("mount_tmpfs_nested", mount("jail-sec-propagation", target, "tmpfs", 0, "size=64k"));
  TRY("make_shared", mount(NULL, "/", NULL, MS_SHARED | MS_REC, NULL));
  TRY("mount_tmpfs_shared", mount("jail-sec-propagation", target, "tmpfs", 0, "size=64k"));
  say("mounted", "yes");
  sleep(2);
  return 0;
}

static int mode_link(int argc, char** argv) {
  if (argc < 3) return 2;
  TRY("link", link(argv[1], argv[2]));
  TRY("write_src", open(argv[1], O_WRONLY | O_APPEND | O_CLOEXEC));
  TRY("write_dst", open(argv[2], O_WRONLY | O_APPEND | O_CLOEXEC));
  return 0;
}

static int mode_whoami(int argc, char** argv) {
  (void)argc;
  (void)argv;
  uid_t r, e, s;
  gid_t gr, ge, gs;
  getresuid(&r, &e, &s);
  getresgid(&gr, &ge, &gs);
  printf("uid=%u,%u,%u\ngid=%u,%u,%u\n", r, e, s, gr, ge, gs);
  FILE* f = fopen("/proc/self/status", "r");
  char line[256];
  while (f != NULL && fgets(line, sizeof line, f) != NULL) {
    if (strncmp(line, "Cap", 3) == 0 || strncmp(line, "NoNewPrivs", 10) == 0) {
      line[strcspn(line, ":")] = '=';
      char* v = line + strcspn(line, "=") + 1;
      while (*v == '\t' || *v == ' ') memmove(v, v + 1, strlen(v));
      fputs(line, stdout);
    }
  }
  if (f != NULL) fclose(f);
  fflush(stdout);
  return 0;
}

int main(int argc, char** argv) {
  static const struct probe_mode modes[] = {{"exe", mode_exe},
                                            {"fds", mode_fds},
                                            {"proc1", mode_proc1},
                                            {"procsys", mode_procsys},
                                            {"mknod", mode_mknod},
                                            {"remount", mode_remount},
                                            {"userns_remount", mode_userns_remount},
                                            {"propagate", mode_propagate},
                                            {"link", mode_link},
                                            {"whoami", mode_whoami},
                                            {NULL, NULL}};
  return dispatch("sec_fs", modes, argc, argv);
}
