#include "policy/constants.hpp"

// Values come straight from the system headers so a policy's TIOCSTI is the kernel's TIOCSTI.
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace jail::policy {
namespace {

#define C(name)                               \
  NamedConstant {                             \
#name, static_cast < std::uint64_t>(name) \
  }

const std::vector<NamedConstant> kConstants = {
    // socket(2) domains, types and flags
    C(AF_UNSPEC),
    C(AF_UNIX),
    C(AF_LOCAL),
    C(AF_INET),
    C(AF_INET6),
    C(AF_NETLINK),
    C(AF_PACKET),
    C(AF_KEY),
    C(AF_BLUETOOTH),
    C(AF_ALG),
    C(AF_VSOCK),
    C(AF_XDP),
    C(AF_CAN),
    C(AF_TIPC),
    C(AF_APPLETALK),
    C(AF_X25),
    C(AF_AX25),
    C(AF_IPX),
    C(AF_RDS),
    C(AF_LLC),
    C(AF_IB),
    C(AF_MPLS),
    C(AF_NFC),
    C(AF_SMC),
    C(AF_QIPCRTR),
    C(AF_KCM),
    C(AF_PPPOX),
    C(SOCK_STREAM),
    C(SOCK_DGRAM),
    C(SOCK_RAW),
    C(SOCK_SEQPACKET),
    C(SOCK_RDM),
    C(SOCK_NONBLOCK),
    C(SOCK_CLOEXEC),
    C(SOL_SOCKET),
    C(SO_REUSEADDR),
    C(SO_KEEPALIVE),
    C(SO_RCVBUF),
    C(SO_SNDBUF),
    C(SO_ATTACH_FILTER),
    C(SO_ATTACH_BPF),
    C(IPPROTO_IP),
    C(IPPROTO_TCP),
    C(IPPROTO_UDP),
    C(IPPROTO_ICMP),
    C(IPPROTO_ICMPV6),
    C(IPPROTO_IPV6),
    C(IPPROTO_RAW),
    C(MSG_DONTWAIT),
    C(MSG_NOSIGNAL),
    C(MSG_PEEK),
    C(MSG_WAITALL),
    // clone(2), unshare(2), setns(2)
    C(CLONE_VM),
    C(CLONE_FS),
    C(CLONE_FILES),
    C(CLONE_SIGHAND),
    C(CLONE_PIDFD),
    C(CLONE_PTRACE),
    C(CLONE_VFORK),
    C(CLONE_PARENT),
    C(CLONE_THREAD),
    C(CLONE_NEWNS),
    C(CLONE_SYSVSEM),
    C(CLONE_SETTLS),
    C(CLONE_PARENT_SETTID),
    C(CLONE_CHILD_CLEARTID),
    C(CLONE_DETACHED),
    C(CLONE_UNTRACED),
    C(CLONE_CHILD_SETTID),
    C(CLONE_NEWCGROUP),
    C(CLONE_NEWUTS),
    C(CLONE_NEWIPC),
    C(CLONE_NEWUSER),
    C(CLONE_NEWPID),
    C(CLONE_NEWNET),
    C(CLONE_IO),
    C(CLONE_NEWTIME),
    C(CSIGNAL),
    // ioctl(2) requests: terminals and files
    C(TCGETS),
    C(TCSETS),
    C(TCSETSW),
    C(TCSETSF),
    C(TCGETA),
    C(TCSETA),
    C(TCSETAW),
    C(TCSETAF),
    C(TCSBRK),
    C(TCXONC),
    C(TCFLSH),
    C(TIOCEXCL),
    C(TIOCNXCL),
    C(TIOCSCTTY),
    C(TIOCGPGRP),
    C(TIOCSPGRP),
    C(TIOCOUTQ),
    C(TIOCSTI),
    C(TIOCGWINSZ),
    C(TIOCSWINSZ),
    C(TIOCMGET),
    C(TIOCMBIS),
    C(TIOCMBIC),
    C(TIOCMSET),
    C(TIOCGSOFTCAR),
    C(TIOCSSOFTCAR),
    C(TIOCINQ),
    C(TIOCLINUX),
    C(TIOCCONS),
    C(TIOCGSERIAL),
    C(TIOCSSERIAL),
    C(TIOCPKT),
    C(TIOCNOTTY),
    C(TIOCSETD),
    C(TIOCGETD),
    C(TCSBRKP),
    C(TIOCSBRK),
    C(TIOCCBRK),
    C(TIOCGSID),
    C(TIOCGPTN),
    C(TIOCSPTLCK),
    C(TIOCGPTPEER),
    C(TIOCGDEV),
    C(TIOCGPKT),
    C(TIOCGPTLCK),
    C(TIOCGEXCL),
    C(TIOCSIG),
    C(TIOCVHANGUP),
    C(FIONREAD),
    C(FIONBIO),
    C(FIOCLEX),
    C(FIONCLEX),
    C(FIOASYNC),
    C(FIOQSIZE),
    // mmap(2), mprotect(2), madvise(2)
    C(PROT_NONE),
    C(PROT_READ),
    C(PROT_WRITE),
    C(PROT_EXEC),
    C(PROT_GROWSDOWN),
    C(PROT_GROWSUP),
    C(MAP_SHARED),
    C(MAP_PRIVATE),
    C(MAP_SHARED_VALIDATE),
    C(MAP_FIXED),
    C(MAP_ANONYMOUS),
    C(MAP_ANON),
    C(MAP_GROWSDOWN),
    C(MAP_DENYWRITE),
    C(MAP_EXECUTABLE),
    C(MAP_LOCKED),
    C(MAP_NORESERVE),
    C(MAP_POPULATE),
    C(MAP_NONBLOCK),
    C(MAP_STACK),
    C(MAP_HUGETLB),
    C(MAP_FIXED_NOREPLACE),
    C(MAP_32BIT),
    C(MADV_NORMAL),
    C(MADV_RANDOM),
    C(MADV_SEQUENTIAL),
    C(MADV_WILLNEED),
    C(MADV_DONTNEED),
    C(MADV_FREE),
    C(MADV_DONTFORK),
    C(MADV_DOFORK),
    C(MADV_HUGEPAGE),
    C(MADV_NOHUGEPAGE),
    C(MADV_DONTDUMP),
    C(MADV_DODUMP),
    // chmod(2), open(2)'s mode; mknod(2)'s file type
    C(S_ISUID),
    C(S_ISGID),
    C(S_ISVTX),
    C(S_IFMT),
    C(S_IFCHR),
    C(S_IFBLK),
    // renameat2(2)
    C(RENAME_WHITEOUT),
    // open(2), fcntl(2), *at(2)
    C(O_RDONLY),
    C(O_WRONLY),
    C(O_RDWR),
    C(O_ACCMODE),
    C(O_CREAT),
    C(O_EXCL),
    C(O_NOCTTY),
    C(O_TRUNC),
    C(O_APPEND),
    C(O_NONBLOCK),
    C(O_DSYNC),
    C(O_SYNC),
    C(O_DIRECTORY),
    C(O_NOFOLLOW),
    C(O_CLOEXEC),
    C(O_DIRECT),
    C(O_LARGEFILE),
    C(O_NOATIME),
    C(O_PATH),
    C(O_TMPFILE),
    C(F_DUPFD),
    C(F_GETFD),
    C(F_SETFD),
    C(F_GETFL),
    C(F_SETFL),
    C(F_GETLK),
    C(F_SETLK),
    C(F_SETLKW),
    C(F_SETOWN),
    C(F_GETOWN),
    C(F_DUPFD_CLOEXEC),
    C(F_SETPIPE_SZ),
    C(F_GETPIPE_SZ),
    C(F_ADD_SEALS),
    C(F_GET_SEALS),
    C(F_OFD_GETLK),
    C(F_OFD_SETLK),
    C(F_OFD_SETLKW),
    C(FD_CLOEXEC),
    C(AT_FDCWD),
    C(AT_SYMLINK_NOFOLLOW),
    C(AT_REMOVEDIR),
    C(AT_SYMLINK_FOLLOW),
    C(AT_EMPTY_PATH),
    C(AT_NO_AUTOMOUNT),
    // prctl(2)
    C(PR_SET_PDEATHSIG),
    C(PR_GET_PDEATHSIG),
    C(PR_GET_DUMPABLE),
    C(PR_SET_DUMPABLE),
    C(PR_GET_KEEPCAPS),
    C(PR_SET_KEEPCAPS),
    C(PR_SET_NAME),
    C(PR_GET_NAME),
    C(PR_GET_SECCOMP),
    C(PR_SET_SECCOMP),
    C(PR_CAPBSET_READ),
    C(PR_CAPBSET_DROP),
    C(PR_GET_TIMERSLACK),
    C(PR_SET_TIMERSLACK),
    C(PR_SET_MM),
    C(PR_SET_PTRACER),
    C(PR_SET_CHILD_SUBREAPER),
    C(PR_GET_CHILD_SUBREAPER),
    C(PR_SET_NO_NEW_PRIVS),
    C(PR_GET_NO_NEW_PRIVS),
    C(PR_GET_TID_ADDRESS),
    C(PR_SET_THP_DISABLE),
    C(PR_GET_THP_DISABLE),
    C(PR_CAP_AMBIENT),
    C(PR_SET_VMA),
    C(PR_GET_SECUREBITS),
    C(PR_SET_SECUREBITS),
    C(PR_SET_TSC),
    C(PR_GET_TSC),
    // seccomp(2)
    C(SECCOMP_SET_MODE_STRICT),
    C(SECCOMP_SET_MODE_FILTER),
    C(SECCOMP_GET_ACTION_AVAIL),
    C(SECCOMP_GET_NOTIF_SIZES),
    C(SECCOMP_FILTER_FLAG_TSYNC),
    C(SECCOMP_FILTER_FLAG_LOG),
    C(SECCOMP_FILTER_FLAG_SPEC_ALLOW),
    C(SECCOMP_FILTER_FLAG_NEW_LISTENER),
    C(SECCOMP_FILTER_FLAG_TSYNC_ESRCH),
    C(SECCOMP_MODE_STRICT),
    C(SECCOMP_MODE_FILTER),
    // ptrace(2)
    C(PTRACE_TRACEME),
    C(PTRACE_PEEKTEXT),
    C(PTRACE_PEEKDATA),
    C(PTRACE_PEEKUSER),
    C(PTRACE_POKETEXT),
    C(PTRACE_POKEDATA),
    C(PTRACE_POKEUSER),
    C(PTRACE_CONT),
    C(PTRACE_KILL),
    C(PTRACE_SINGLESTEP),
    C(PTRACE_GETREGS),
    C(PTRACE_SETREGS),
    C(PTRACE_ATTACH),
    C(PTRACE_DETACH),
    C(PTRACE_SYSCALL),
    C(PTRACE_SETOPTIONS),
    C(PTRACE_GETEVENTMSG),
    C(PTRACE_SEIZE),
    C(PTRACE_INTERRUPT),
    C(PTRACE_LISTEN),
    // personality(2): the values a normal program asks for, and the query value
    C(PER_LINUX),
    C(PER_LINUX32),
    C(PER_BSD),
    C(PER_SVR4),
    C(UNAME26),
    C(ADDR_NO_RANDOMIZE),
    C(FDPIC_FUNCPTRS),
    C(MMAP_PAGE_ZERO),
    C(ADDR_COMPAT_LAYOUT),
    C(READ_IMPLIES_EXEC),
    C(ADDR_LIMIT_32BIT),
    C(SHORT_INODE),
    C(WHOLE_SECONDS),
    C(STICKY_TIMEOUTS),
    C(ADDR_LIMIT_3GB),
    NamedConstant{"PER_QUERY", 0xffffffffULL},
    // futex(2)
    C(FUTEX_WAIT),
    C(FUTEX_WAKE),
    C(FUTEX_REQUEUE),
    C(FUTEX_CMP_REQUEUE),
    C(FUTEX_WAKE_OP),
    C(FUTEX_LOCK_PI),
    C(FUTEX_UNLOCK_PI),
    C(FUTEX_TRYLOCK_PI),
    C(FUTEX_WAIT_BITSET),
    C(FUTEX_WAKE_BITSET),
    C(FUTEX_WAIT_REQUEUE_PI),
    C(FUTEX_CMP_REQUEUE_PI),
    C(FUTEX_PRIVATE_FLAG),
    C(FUTEX_CLOCK_REALTIME),
    // signals, for kill(2) and friends
    C(SIGHUP),
    C(SIGINT),
    C(SIGQUIT),
    C(SIGILL),
    C(SIGTRAP),
    C(SIGABRT),
    C(SIGBUS),
    C(SIGFPE),
    C(SIGKILL),
    C(SIGUSR1),
    C(SIGSEGV),
    C(SIGUSR2),
    C(SIGPIPE),
    C(SIGALRM),
    C(SIGTERM),
    C(SIGCHLD),
    C(SIGCONT),
    C(SIGSTOP),
    C(SIGTSTP),
    C(SIGTTIN),
    C(SIGTTOU),
    C(SIGSYS),
    C(SIGWINCH),
    // wait4(2), rt_sigprocmask(2), lseek(2), access
    C(WNOHANG),
    C(WUNTRACED),
    C(WCONTINUED),
    C(SIG_BLOCK),
    C(SIG_UNBLOCK),
    C(SIG_SETMASK),
    C(SEEK_SET),
    C(SEEK_CUR),
    C(SEEK_END),
    C(F_OK),
    C(R_OK),
    C(W_OK),
    C(X_OK),
};

#undef C
#define E(name)                               \
  NamedConstant {                             \
#name, static_cast < std::uint64_t>(name) \
  }

const std::vector<NamedConstant> kErrnos = {
    E(EPERM),           E(ENOENT),     E(ESRCH),         E(EINTR),        E(EIO),
    E(ENXIO),           E(E2BIG),      E(ENOEXEC),       E(EBADF),        E(ECHILD),
    E(EAGAIN),          E(ENOMEM),     E(EACCES),        E(EFAULT),       E(EBUSY),
    E(EEXIST),          E(EXDEV),      E(ENODEV),        E(ENOTDIR),      E(EISDIR),
    E(EINVAL),          E(ENFILE),     E(EMFILE),        E(ENOTTY),       E(ETXTBSY),
    E(EFBIG),           E(ENOSPC),     E(ESPIPE),        E(EROFS),        E(EMLINK),
    E(EPIPE),           E(EDOM),       E(ERANGE),        E(EDEADLK),      E(ENAMETOOLONG),
    E(ENOLCK),          E(ENOSYS),     E(ENOTEMPTY),     E(ELOOP),        E(ENOMSG),
    E(ENODATA),         E(ENOTSUP),    E(EOPNOTSUPP),    E(EAFNOSUPPORT), E(EPROTONOSUPPORT),
    E(ESOCKTNOSUPPORT), E(EADDRINUSE), E(EADDRNOTAVAIL), E(ENETDOWN),     E(ENETUNREACH),
    E(ECONNREFUSED),    E(ECONNRESET), E(ETIMEDOUT),     E(EHOSTUNREACH), E(EALREADY),
    E(EINPROGRESS),     E(ENOTSOCK),   E(EMSGSIZE),      E(EPROTOTYPE),   E(ENOPROTOOPT),
    E(EDQUOT),          E(ECANCELED),  E(EOWNERDEAD),    E(ENOKEY),       E(EKEYREVOKED),
    E(ENOTCONN),        E(EISCONN),    E(ESHUTDOWN),     E(EOVERFLOW),    E(EILSEQ),
};

#undef E

}  // namespace

std::optional<std::uint64_t> constant_value(std::string_view name) {
  for (const NamedConstant& c : kConstants)
    if (c.name == name) return c.value;
  return std::nullopt;
}

const std::vector<NamedConstant>& all_constants() {
  return kConstants;
}

std::optional<int> errno_value(std::string_view name) {
  for (const NamedConstant& c : kErrnos)
    if (c.name == name) return static_cast<int>(c.value);
  return std::nullopt;
}

std::string_view errno_name(int value) {
  // Aliases (EWOULDBLOCK, ENOTSUP/EOPNOTSUPP) resolve to the first listed name.
  for (const NamedConstant& c : kErrnos)
    if (c.value == static_cast<std::uint64_t>(value)) return c.name;
  return {};
}

const std::vector<NamedConstant>& all_errno_names() {
  return kErrnos;
}

}  // namespace jail::policy
