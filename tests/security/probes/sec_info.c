/* What of the host a tool can learn; see tests/security/README.md.
 *   sec_info paths P...       open and stat each path (/etc/shadow, $HOME, a host marker)
 *   sec_info env              the environment, one K=V per line, prefixed "env:"
 *   sec_info procs NEKOT      visible pids; whether any process's cmdline holds TOKEN, given
 *                             reversed (jail's own argv, shown as PID 1's, holds NEKOT)
 *   sec_info cmdline1         PID 1's command line (the reaper: a fork of jail itself)
 *   sec_info ifaces           network interface names
 *   sec_info abstract NAME    connect to the abstract unix socket @NAME
 *   sec_info keys DESC        whether /proc/keys shows a key described DESC
 *   sec_info dmesg            read the kernel log through syslog(2) and /dev/kmsg */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <net/if.h>
#include <stddef.h>
#include <sys/klog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "sec_probe.h"

extern char** environ;

static int mode_paths(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    char name[4200];
    struct stat st;
    snprintf(name, sizeof name, "stat:%s", argv[i]);
    TRY(name, stat(argv[i], &st));
    snprintf(name, sizeof name, "open:%s", argv[i]);
    TRY(name, open(argv[i], O_RDONLY | O_CLOEXEC));
  }
  return 0;
}

static int mode_env(int argc, char** argv) {
  (void)argc;
  (void)argv;
  for (char** e = environ; *e != NULL; ++e) printf("env:%s\n", *e);
  return 0;
}

static int mode_procs(int argc, char** argv) {
  char token[256] = "";
  if (argc > 1) {
    size_t len = strlen(argv[1]);
    if (len >= sizeof token) len = sizeof token - 1;
    for (size_t i = 0; i < len; ++i) token[i] = argv[1][len - 1 - i];
    token[len] = '\0';
  }
  DIR* dir = opendir("/proc");
  if (dir == NULL) {
    TRY("opendir_proc", -1);
    return 1;
  }
  int count = 0;
  int seen = 0;
  const struct dirent* e;
  char pids[4096] = "";
  while ((e = readdir(dir)) != NULL) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    ++count;
    size_t len = strlen(pids);
    snprintf(pids + len, sizeof pids - len, "%s%s", len ? "," : "", e->d_name);
    char path[300];
    snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) continue;
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] == '\0') buf[i] = ' ';
    }
    buf[n] = '\0';
    /* Our own cmdline holds the token as an argument: skip ourselves. */
    if (*token && strstr(buf, token) != NULL) seen = 1;
  }
  closedir(dir);
  printf("pid_count=%d\npids=%s\n", count, pids);
  say("token_seen", seen ? "yes" : "no");
  return 0;
}

static int mode_ifaces(int argc, char** argv) {
  (void)argc;
  (void)argv;
  struct if_nameindex* list = if_nameindex();
  if (list == NULL) {
    TRY("if_nameindex", -1);
    return 1;
  }
  char names[1024] = "";
  for (struct if_nameindex* i = list; i->if_index != 0; ++i) {
    size_t len = strlen(names);
    snprintf(names + len, sizeof names - len, "%s%s", len ? "," : "", i->if_name);
  }
  if_freenameindex(list);
  say("ifaces", names);
  return 0;
}

static int mode_abstract(int argc, char** argv) {
  const char* name = argc > 1 ? argv[1] : "jail-sec";
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  TRY("socket", fd);
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  size_t len = strlen(name);
  if (len > sizeof addr.sun_path - 1) len = sizeof addr.sun_path - 1;
  memcpy(addr.sun_path + 1, name, len);
  socklen_t size = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len);
  TRY("connect_abstract", connect(fd, (struct sockaddr*)&addr, size));
  return 0;
}

// A socket file of the host's, in a bound directory: connect a stream socket to it, then try to
// make a datagram socket and send it one datagram.
static int mode_unix(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "/w/host.sock";
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  strncpy(addr.sun_path, path, sizeof addr.sun_path - 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  TRY("socket_stream", fd);
  TRY("connect_unix", connect(fd, (struct sockaddr*)&addr, sizeof addr));
  int dgram = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  TRY("socket_dgram", dgram);
  if (dgram >= 0)
    TRY("sendto_unix", sendto(dgram, "x", 1, 0, (struct sockaddr*)&addr, sizeof addr));
  return 0;
}

static int mode_keys(int argc, char** argv) {
  const char* desc = argc > 1 ? argv[1] : "jail-sec";
  FILE* f = fopen("/proc/keys", "r");
  if (f == NULL) {
    TRY("open_proc_keys", -1);
    return 0;
  }
  int seen = 0;
  int lines = 0;
  char line[512];
  while (fgets(line, sizeof line, f) != NULL) {
    ++lines;
    if (strstr(line, desc) != NULL) seen = 1;
  }
  fclose(f);
  printf("proc_keys_lines=%d\n", lines);
  say("host_key_seen", seen ? "yes" : "no");
  return 0;
}

static int mode_dmesg(int argc, char** argv) {
  (void)argc;
  (void)argv;
  char buf[4096];
  int n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, sizeof buf - 1);
  TRY("syslog_read_all", n);
  if (n > 0) {
    buf[n] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    say("syslog_first_line", buf);
  }
  TRY("syslog_size_buffer", klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0));
  int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  TRY("open_dev_kmsg", fd);
  if (fd >= 0) TRY("read_dev_kmsg", read(fd, buf, sizeof buf));
  return 0;
}

static int mode_cmdline1(int argc, char** argv) {
  (void)argc;
  (void)argv;
  int fd = open("/proc/1/cmdline", O_RDONLY | O_CLOEXEC);
  TRY("open_proc1_cmdline", fd);
  if (fd < 0) return 0;
  char buf[8192];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n < 0) n = 0;
  for (ssize_t i = 0; i < n; ++i) {
    if (buf[i] == '\0' || buf[i] == '\n') buf[i] = ' ';
  }
  buf[n] = '\0';
  say("proc1_cmdline", buf);
  return 0;
}

int main(int argc, char** argv) {
  static const struct probe_mode modes[] = {
      {"paths", mode_paths},       {"env", mode_env},
      {"procs", mode_procs},       {"ifaces", mode_ifaces},
      {"abstract", mode_abstract}, {"keys", mode_keys},
      {"dmesg", mode_dmesg},       {"cmdline1", mode_cmdline1},
      {"unix", mode_unix},         {NULL, NULL}};
  return dispatch("sec_info", modes, argc, argv);
}
