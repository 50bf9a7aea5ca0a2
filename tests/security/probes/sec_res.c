/* Resource abuse the limits tests do not cover; see tests/security/README.md.
 *   sec_res fds            open /dev/null until refused; prints the count and the errno
 *   sec_res threads        start sleeping threads until refused
 *   sec_res flood          write stdout until a write fails (SIGPIPE ignored)
 *   sec_res disk PATH      fill PATH with one file until a write fails
 *   sec_res daemon TOKEN   double-fork a setsid grandchild that ignores every signal; exits 0
 *   sec_res stubborn       setsid, ignore every signal, print "ready", sleep forever
 *   sec_res mute           close stdin, stdout, stderr and sleep forever */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sec_probe.h"

static void ignore_all_signals(void) {
  for (int s = 1; s < NSIG; ++s) {
    if (s != SIGKILL && s != SIGSTOP) signal(s, SIG_IGN);
  }
}

static int mode_fds(int argc, char** argv) {
  (void)argc;
  (void)argv;
  int count = 0;
  int fd;
  while ((fd = open("/dev/null", O_RDONLY)) >= 0) ++count;
  int err = errno;
  printf("opened=%d\n", count);
  report("open_after_limit", -1, err);
  return 0;
}

static void* sleeper(void* unused) {
  (void)unused;
  for (;;) pause();
  return NULL;
}

static int mode_threads(int argc, char** argv) {
  (void)argc;
  (void)argv;
  int count = 0;
  int rc;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  pthread_t t;
  while (count < 100000 && (rc = pthread_create(&t, &attr, sleeper, NULL)) == 0) ++count;
  printf("threads=%d\n", count);
  report("pthread_create_after_limit", -1, rc);
  return 0;
}

static int mode_flood(int argc, char** argv) {
  (void)argc;
  (void)argv;
  signal(SIGPIPE, SIG_IGN);
  static char chunk[65536];
  memset(chunk, 'x', sizeof chunk);
  unsigned long long total = 0;
  for (;;) {
    ssize_t n = write(STDOUT_FILENO, chunk, sizeof chunk);
    if (n < 0) {
      fprintf(stderr, "flood_written=%llu\n", total);
      const char* e = strerrorname_np(errno);
      fprintf(stderr, "flood_write=%s\n", e != NULL ? e : "E?");
      return 0;
    }
    total += (unsigned long long)n;
    if (total > (64ULL << 20)) return 3; /* never cut: give up at 64 MiB */
  }
}

static int mode_disk(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "/tmp/fill";
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  TRY("open_fill", fd);
  if (fd < 0) return 1;
  static char chunk[65536];
  memset(chunk, 'x', sizeof chunk);
  unsigned long long total = 0;
  ssize_t n;
  while ((n = write(fd, chunk, sizeof chunk)) > 0) total += (unsigned long long)n;
  int err = errno;
  printf("filled=%llu\n", total);
  report("write_after_full", n, err);
  return 0;
}

static int mode_daemon(int argc, char** argv) {
  (void)argc;
  (void)argv;
  int ready[2];
  if (pipe(ready) != 0) return 1;
  pid_t child = fork();
  if (child == 0) {
    if (fork() != 0) _exit(0);
    setsid();
    ignore_all_signals();
    close(ready[0]);
    (void)!write(ready[1], "r", 1);
    close(ready[1]);
    for (;;) sleep(1);
  }
  close(ready[1]);
  char c;
  (void)!read(ready[0], &c, 1);
  waitpid(child, NULL, 0);
  say("daemon", "started");
  return 0;
}

static int mode_stubborn(int argc, char** argv) {
  (void)argc;
  (void)argv;
  TRY("setsid", setsid());
  ignore_all_signals();
  say("ready", "yes");
  for (;;) pause();
  return 0;
}

static int mode_mute(int argc, char** argv) {
  (void)argc;
  (void)argv;
  ignore_all_signals();
  close(STDIN_FILENO);
  close(STDOUT_FILENO);
  close(STDERR_FILENO);
  for (;;) sleep(1);
  return 0;
}

int main(int argc, char** argv) {
  static const struct probe_mode modes[] = {{"fds", mode_fds},       {"threads", mode_threads},
                                            {"flood", mode_flood},   {"disk", mode_disk},
                                            {"daemon", mode_daemon}, {"stubborn", mode_stubborn},
                                            {"mute", mode_mute},     {NULL, NULL}};
  return dispatch("sec_res", modes, argc, argv);
}
