// Host side: the helper's own seccomp filter (libseccomp). Kill the process on anything else:
// the helper reads what a tool sends, so a bug in it must not become the host's.
#include "own_filter.hpp"

#include <fcntl.h>
#include <linux/netlink.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <initializer_list>
#include <memory>

#include "setup_error.hpp"

namespace jail::egress {

namespace {

using Filter = std::unique_ptr<void, decltype(&seccomp_release)>;

void add(scmp_filter_ctx filter, int syscall, std::initializer_list<scmp_arg_cmp> conditions = {},
         std::uint32_t action = SCMP_ACT_ALLOW) {
  const int result =
      seccomp_rule_add_array(filter, action, syscall, static_cast<unsigned>(conditions.size()),
                             conditions.size() ? conditions.begin() : nullptr);
  if (result != 0) {
    errno = -result;
    throw system_error("adding syscall " + std::to_string(syscall) + " to the helper's filter");
  }
}

// Threads, memory (never executable: no code is loaded after set-up), time, exit.
void allow_runtime(scmp_filter_ctx filter) {
  for (const int syscall : {SCMP_SYS(futex),
                            SCMP_SYS(set_robust_list),
                            SCMP_SYS(rseq),
                            SCMP_SYS(brk),
                            SCMP_SYS(munmap),
                            SCMP_SYS(madvise),
                            SCMP_SYS(mremap),
                            SCMP_SYS(rt_sigprocmask),
                            SCMP_SYS(rt_sigreturn),
                            SCMP_SYS(restart_syscall),
                            SCMP_SYS(sched_yield),
                            SCMP_SYS(sched_getaffinity),
                            SCMP_SYS(getpid),
                            SCMP_SYS(gettid),
                            SCMP_SYS(getuid),
                            SCMP_SYS(geteuid),
                            SCMP_SYS(getgid),
                            SCMP_SYS(getegid),
                            SCMP_SYS(uname),
                            SCMP_SYS(clock_gettime),
                            SCMP_SYS(clock_nanosleep),
                            SCMP_SYS(nanosleep),
                            SCMP_SYS(gettimeofday),
                            SCMP_SYS(getrandom),
                            SCMP_SYS(exit),
                            SCMP_SYS(exit_group)}) {
    add(filter, syscall);
  }
  add(filter, SCMP_SYS(mmap), {SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0)});
  add(filter, SCMP_SYS(mprotect), {SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0)});
  // Threads only, no new processes; clone3 hides its flags in memory, so glibc is told it is
  // missing and falls back to clone.
  add(filter, SCMP_SYS(clone), {SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD)});
  add(filter, SCMP_SYS(clone3), {}, SCMP_ACT_ERRNO(ENOSYS));
  // abort() signals its own process and nothing else.
  add(filter, SCMP_SYS(tgkill), {SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(getpid()))});
}

// Reading files (/etc/hosts, resolv.conf, gai.conf, nsswitch.conf): never writing or creating.
void allow_reading_files(scmp_filter_ctx filter) {
  constexpr scmp_datum_t kWriting =
      O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND | (O_TMPFILE & ~O_DIRECTORY);
  add(filter, SCMP_SYS(openat), {SCMP_A2(SCMP_CMP_MASKED_EQ, kWriting, 0)});
  for (const int syscall :
       {SCMP_SYS(read), SCMP_SYS(pread64), SCMP_SYS(readv), SCMP_SYS(lseek), SCMP_SYS(fstat),
        SCMP_SYS(newfstatat), SCMP_SYS(statx), SCMP_SYS(close), SCMP_SYS(fcntl)}) {
    add(filter, syscall);
  }
}

// Sockets: TCP out and in, the resolver's UDP, nscd's AF_UNIX, the route netlink that
// AI_ADDRCONFIG asks; the relay's pipes and splice.
void allow_network(scmp_filter_ctx filter) {
  for (const int family : {AF_INET, AF_INET6, AF_UNIX}) {
    add(filter, SCMP_SYS(socket), {SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(family))});
  }
  add(filter, SCMP_SYS(socket),
      {SCMP_A0(SCMP_CMP_EQ, AF_NETLINK), SCMP_A2(SCMP_CMP_EQ, NETLINK_ROUTE)});
  for (const int syscall :
       {SCMP_SYS(accept4),     SCMP_SYS(connect),     SCMP_SYS(bind),          SCMP_SYS(shutdown),
        SCMP_SYS(getsockname), SCMP_SYS(getpeername), SCMP_SYS(getsockopt),    SCMP_SYS(setsockopt),
        SCMP_SYS(write),       SCMP_SYS(writev),      SCMP_SYS(sendto),        SCMP_SYS(sendmsg),
        SCMP_SYS(sendmmsg),    SCMP_SYS(recvfrom),    SCMP_SYS(recvmsg),       SCMP_SYS(recvmmsg),
        SCMP_SYS(poll),        SCMP_SYS(ppoll),       SCMP_SYS(epoll_create1), SCMP_SYS(epoll_ctl),
        SCMP_SYS(epoll_wait),  SCMP_SYS(epoll_pwait), SCMP_SYS(pipe2),         SCMP_SYS(splice)}) {
    add(filter, syscall);
  }
  // The resolver asks how many bytes a UDP answer has; the mask keeps the command 32 bits.
  add(filter, SCMP_SYS(ioctl), {SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffU, FIONREAD)});
}

}  // namespace

void load_own_filter() {
  Filter filter(seccomp_init(SCMP_ACT_KILL_PROCESS), seccomp_release);
  if (!filter) throw SetupError("seccomp_init failed");
  // Only the native architecture; another (or x32's syscall numbers) is killed too.
  if (seccomp_attr_set(filter.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) != 0) {
    throw SetupError("setting the helper filter's architecture action failed");
  }
  allow_runtime(filter.get());
  allow_reading_files(filter.get());
  allow_network(filter.get());
  if (const int result = seccomp_load(filter.get()); result != 0) {
    errno = -result;
    throw system_error("loading the helper's seccomp filter");
  }
}

}  // namespace jail::egress
