/* Seccomp escape attempts that need more than a raw call with numbers; see
 * tests/security/README.md.
 *   sec_sc listener        install an allow-all filter asking for a new listener fd
 *   sec_sc filter          install an allow-all filter without one (allowed: filters only add)
 *   sec_sc io_uring        io_uring_setup with real parameters
 *   sec_sc userfaultfd     userfaultfd(O_CLOEXEC)
 *   sec_sc perf            perf_event_open on the task clock of this process
 *   sec_sc ptrace_init     ptrace(PTRACE_ATTACH, 1) then PTRACE_SEIZE 1
 *   sec_sc vm_write_init   process_vm_writev into PID 1
 *   sec_sc caught_kill     catch SIGSYS, then perf_event_open (killed by the default policy)
 *                          and, if it returns, tick for up to 5 s: how far a tool that
 *                          handles SIGSYS gets past a killed call */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/io_uring.h>
#include <linux/perf_event.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "sec_probe.h"

static long install_allow_all(unsigned flags) {
  struct sock_filter insns[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
  struct sock_fprog prog = {.len = 1, .filter = insns};
  return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
}

static int mode_listener(int argc, char** argv) {
  (void)argc;
  (void)argv;
  say("calling", "seccomp_new_listener");
  TRY("seccomp_new_listener", install_allow_all(SECCOMP_FILTER_FLAG_NEW_LISTENER));
  return 0;
}

static int mode_filter(int argc, char** argv) {
  (void)argc;
  (void)argv;
  TRY("seccomp_filter", install_allow_all(0));
  /* The jail's own filter still applies below the new one. */
  say("calling", "ptrace_after_filter");
  TRY("ptrace_after_filter", syscall(SYS_ptrace, PTRACE_ATTACH, 1, 0, 0));
  return 0;
}

static int mode_io_uring(int argc, char** argv) {
  (void)argc;
  (void)argv;
  struct io_uring_params params;
  memset(&params, 0, sizeof params);
  say("calling", "io_uring_setup");
  TRY("io_uring_setup", syscall(SYS_io_uring_setup, 8, &params));
  return 0;
}

static int mode_userfaultfd(int argc, char** argv) {
  (void)argc;
  (void)argv;
  say("calling", "userfaultfd");
  TRY("userfaultfd", syscall(SYS_userfaultfd, O_CLOEXEC));
  return 0;
}

/* perf_event_open of this task's own clock: the least a perf user asks for. */
static long open_task_clock(void) {
  struct perf_event_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  return syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
}

static int mode_perf(int argc, char** argv) {
  (void)argc;
  (void)argv;
  say("calling", "perf_event_open");
  TRY("perf_event_open", open_task_clock());
  return 0;
}

static int mode_ptrace_init(int argc, char** argv) {
  (void)argc;
  (void)argv;
  say("calling", "ptrace_attach_init");
  TRY("ptrace_attach_init", syscall(SYS_ptrace, PTRACE_ATTACH, 1, 0, 0));
  TRY("ptrace_seize_init", syscall(SYS_ptrace, PTRACE_SEIZE, 1, 0, 0));
  return 0;
}

static int mode_vm_write_init(int argc, char** argv) {
  (void)argc;
  (void)argv;
  char byte = 0;
  struct iovec local = {&byte, 1};
  struct iovec remote = {(void*)0x1000, 1};
  say("calling", "process_vm_writev_init");
  /* EFAULT would mean permission was granted and only the address was bad. */
  TRY("process_vm_writev_init", syscall(SYS_process_vm_writev, 1, &local, 1, &remote, 1, 0));
  return 0;
}

static void on_sigsys(int sig, siginfo_t* info, void* context) {
  (void)sig;
  (void)context;
  char line[48];
  int n = snprintf(line, sizeof line, "sigsys_handler=%d\n", info->si_syscall);
  if (n > 0) (void)!write(STDOUT_FILENO, line, (size_t)n);
}

static int mode_caught_kill(int argc, char** argv) {
  (void)argc;
  (void)argv;
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = on_sigsys;
  action.sa_flags = SA_SIGINFO;
  TRY("sigaction_sigsys", sigaction(SIGSYS, &action, NULL));
  say("calling", "perf_event_open");
  errno = 0;
  long fd = open_task_clock();
  int saved = errno;
  /* A trapped call is skipped and returns whatever the return register held (gVisor leaves the
   * call's number there), so the raw value is shown, and whether it names an open fd at all. */
  printf("perf_event_open_ret=%ld\n", fd);
  if (fd < 0) report("perf_event_open", fd, saved);
  if (fd >= 0) TRY("returned_fd_open", fcntl((int)fd, F_GETFD));
  /* Each tick is work the tool did after the killed call came back. */
  struct timespec start;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (int tick = 1;; ++tick) {
    struct timespec pause = {0, 1000000};
    nanosleep(&pause, NULL);
    clock_gettime(CLOCK_MONOTONIC, &now);
    long ms = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
    printf("after_kill_ticks=%d\nafter_kill_ms=%ld\n", tick, ms);
    fflush(stdout);
    if (ms >= 5000) break;
  }
  say("survived", "yes");
  return 0;
}

int main(int argc, char** argv) {
  static const struct probe_mode modes[] = {{"listener", mode_listener},
                                            {"filter", mode_filter},
                                            {"io_uring", mode_io_uring},
                                            {"userfaultfd", mode_userfaultfd},
                                            {"perf", mode_perf},
                                            {"ptrace_init", mode_ptrace_init},
                                            {"vm_write_init", mode_vm_write_init},
                                            {"caught_kill", mode_caught_kill},
                                            {NULL, NULL}};
  return dispatch("sec_sc", modes, argc, argv);
}
