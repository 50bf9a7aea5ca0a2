/* Signals from inside; see tests/security/README.md.
 *   sec_sig killall            fork a sleeping child, then kill(-1, SIGKILL); report who died
 *   sec_sig supervisor FILE    wait for FILE to hold a host pid (jail itself, written by the
 *                              test once jail runs), then signal it, PID 1 and the parent */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sec_probe.h"

static int mode_killall(int argc, char** argv) {
  (void)argc;
  (void)argv;
  pid_t child = fork();
  if (child == 0) {
    for (;;) pause();
  }
  /* kill(-1) reaches every process the caller may signal except itself and its PID 1. */
  TRY("kill_minus_one", kill(-1, SIGKILL));
  int status = 0;
  waitpid(child, &status, 0);
  say("own_child", WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL ? "killed" : "alive");
  say("self", "alive");
  return 0;
}

static int mode_supervisor(int argc, char** argv) {
  pid_t host = 0;
  for (int i = 0; i < 200 && argc > 1 && host <= 0; ++i) {
    FILE* f = fopen(argv[1], "r");
    if (f != NULL) {
      int value = 0;
      if (fscanf(f, "%d", &value) == 1) host = (pid_t)value;
      fclose(f);
    }
    if (host <= 0) usleep(50 * 1000);
  }
  char buf[32];
  snprintf(buf, sizeof buf, "%d", (int)getppid());
  say("ppid", buf);
  if (host > 0) {
    TRY("kill0_host_pid", kill(host, 0));
    TRY("pidfd_open_host_pid", syscall(SYS_pidfd_open, host, 0));
  }
  /* PID 1 of a pid namespace ignores SIGKILL and SIGSTOP from inside it. Under runsc the tool
   * may be PID 1 itself (ppid 0), and kill(0) would be its own group: skip those. */
  say("is_init", getpid() == 1 ? "yes" : "no");
  if (getpid() != 1) {
    TRY("kill_init_sigkill", kill(1, SIGKILL));
    TRY("kill_init_sigstop", kill(1, SIGSTOP));
  }
  if (getppid() > 1) TRY("kill_parent_sigkill", kill(getppid(), SIGKILL));
  usleep(200 * 1000);
  say("self", "alive");
  return 0;
}

int main(int argc, char** argv) {
  static const struct probe_mode modes[] = {
      {"killall", mode_killall}, {"supervisor", mode_supervisor}, {NULL, NULL}};
  return dispatch("sec_sig", modes, argc, argv);
}
