// The category of every x86_64 syscall. A name belongs to the category a reviewer would look
// under for it: socketpair to IPC (it reaches no network), unshare and setns to kernel
// interfaces with mount (they change what the tool's namespaces are), ptrace to processes.
#include "policy/categories.hpp"

#include <map>
#include <stdexcept>

#include "policy/syscalls.hpp"

namespace jail::policy {
namespace {

// The lists are read as prose, not one name a line.
// clang-format off
constexpr std::string_view kNetwork[] = {
    "accept", "accept4", "bind", "connect", "getpeername", "getsockname", "getsockopt", "listen",
    "recvfrom", "recvmmsg", "recvmsg", "sendmmsg", "sendmsg", "sendto", "setsockopt", "shutdown",
    "socket"};

constexpr std::string_view kProcesses[] = {
    "arch_prctl", "clone", "clone3", "execve", "execveat", "exit", "exit_group", "fork", "vfork",
    "wait4", "waitid", "getpid", "getppid", "gettid", "getpgid", "getpgrp", "getsid", "setpgid",
    "setsid", "set_tid_address", "get_thread_area", "set_thread_area", "prctl", "personality",
    "getrlimit", "setrlimit", "prlimit64", "getrusage", "getpriority", "setpriority",
    "sched_get_priority_max", "sched_get_priority_min", "sched_getaffinity", "sched_getattr",
    "sched_getparam", "sched_getscheduler", "sched_rr_get_interval", "sched_setaffinity",
    "sched_setattr", "sched_setparam", "sched_setscheduler", "sched_yield", "ioprio_get",
    "ioprio_set", "ptrace", "process_vm_readv", "process_vm_writev", "process_madvise",
    "process_mrelease", "pidfd_open", "pidfd_getfd", "kcmp", "rseq", "getcpu"};

constexpr std::string_view kFiles[] = {
    "access", "chdir", "chmod", "chown", "close", "close_range", "copy_file_range", "creat", "dup",
    "dup2", "dup3", "epoll_create", "epoll_create1", "epoll_ctl", "epoll_pwait", "epoll_pwait2",
    "epoll_wait", "faccessat", "faccessat2", "fadvise64", "fallocate", "fanotify_init",
    "fanotify_mark", "fchdir", "fchmod", "fchmodat", "fchmodat2", "fchown", "fchownat", "fcntl",
    "fdatasync", "fgetxattr", "file_getattr", "file_setattr", "flistxattr", "flock",
    "fremovexattr", "fsetxattr", "fstat", "fstatfs", "fsync", "ftruncate", "futimesat", "getcwd",
    "getdents", "getdents64", "getxattr", "getxattrat", "inotify_add_watch", "inotify_init",
    "inotify_init1", "inotify_rm_watch", "io_cancel", "io_destroy", "io_getevents",
    "io_pgetevents", "io_setup", "io_submit", "ioctl", "lchown", "lgetxattr", "link", "linkat",
    "listxattr", "listxattrat", "llistxattr", "lremovexattr", "lseek", "lsetxattr", "lstat",
    "mkdir", "mkdirat", "mknod", "mknodat", "name_to_handle_at", "newfstatat", "open",
    "open_by_handle_at", "openat", "openat2", "poll", "ppoll", "pread64", "preadv", "preadv2",
    "pselect6", "pwrite64", "pwritev", "pwritev2", "read", "readahead", "readlink", "readlinkat",
    "readv", "removexattr", "removexattrat", "rename", "renameat", "renameat2", "rmdir", "select",
    "sendfile", "setxattr", "setxattrat", "splice", "stat", "statfs", "statx", "symlink",
    "symlinkat", "sync", "sync_file_range", "syncfs", "tee", "truncate", "umask", "unlink",
    "unlinkat", "utime", "utimensat", "utimes", "vmsplice", "write", "writev", "cachestat"};

constexpr std::string_view kPrivileges[] = {
    "capget", "capset", "getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid",
    "getgroups", "setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setfsuid",
    "setfsgid", "setgroups", "seccomp", "landlock_add_rule", "landlock_create_ruleset",
    "landlock_restrict_self", "lsm_get_self_attr", "lsm_set_self_attr", "lsm_list_modules"};

constexpr std::string_view kIpc[] = {
    "socketpair", "pipe", "pipe2", "msgctl", "msgget", "msgrcv", "msgsnd", "semctl", "semget",
    "semop", "semtimedop", "shmat", "shmctl", "shmdt", "shmget", "mq_getsetattr", "mq_notify",
    "mq_open", "mq_timedreceive", "mq_timedsend", "mq_unlink", "futex", "futex_requeue",
    "futex_wait", "futex_waitv", "futex_wake", "get_robust_list", "set_robust_list", "eventfd",
    "eventfd2"};

constexpr std::string_view kTime[] = {
    "adjtimex", "alarm", "clock_adjtime", "clock_getres", "clock_gettime", "clock_nanosleep",
    "clock_settime", "getitimer", "gettimeofday", "nanosleep", "setitimer", "settimeofday", "time",
    "times", "timer_create", "timer_delete", "timer_getoverrun", "timer_gettime", "timer_settime",
    "timerfd_create", "timerfd_gettime", "timerfd_settime"};

constexpr std::string_view kMemory[] = {
    "brk", "get_mempolicy", "madvise", "map_shadow_stack", "mbind", "membarrier", "memfd_create",
    "memfd_secret", "migrate_pages", "mincore", "mlock", "mlock2", "mlockall", "mmap",
    "move_pages", "mprotect", "mremap", "mseal", "msync", "munlock", "munlockall", "munmap",
    "pkey_alloc", "pkey_free", "pkey_mprotect", "remap_file_pages", "set_mempolicy",
    "set_mempolicy_home_node", "userfaultfd"};

constexpr std::string_view kSignals[] = {
    "kill", "pause", "rt_sigaction", "rt_sigpending", "rt_sigprocmask", "rt_sigqueueinfo",
    "rt_sigreturn", "rt_sigsuspend", "rt_sigtimedwait", "rt_tgsigqueueinfo", "sigaltstack",
    "signalfd", "signalfd4", "tgkill", "tkill", "pidfd_send_signal", "restart_syscall"};

constexpr std::string_view kKernel[] = {
    "bpf", "perf_event_open", "init_module", "finit_module", "delete_module", "create_module",
    "get_kernel_syms", "query_module", "kexec_load", "kexec_file_load", "mount", "umount2",
    "pivot_root", "chroot", "move_mount", "open_tree", "open_tree_attr", "fsopen", "fsconfig",
    "fsmount", "fspick", "mount_setattr", "statmount", "listmount", "unshare", "setns", "add_key",
    "keyctl", "request_key", "io_uring_enter", "io_uring_register", "io_uring_setup", "ioperm",
    "iopl", "modify_ldt", "syslog", "lookup_dcookie", "quotactl", "quotactl_fd", "_sysctl",
    "sysfs", "uselib", "nfsservctl", "uretprobe"};

// The calls x86_64 still numbers but no kernel implements (afs_syscall, tuxcall, …) sit here
// too: each returns ENOSYS, whatever a policy says.
constexpr std::string_view kSystem[] = {
    "reboot", "swapon", "swapoff", "sethostname", "setdomainname", "acct", "uname", "sysinfo",
    "getrandom", "ustat", "vhangup", "afs_syscall", "tuxcall", "security", "putpmsg", "getpmsg",
    "vserver", "epoll_ctl_old", "epoll_wait_old"};
// clang-format on

struct Group {
  Category category;
  const std::string_view* begin;
  const std::string_view* end;
};

const std::map<std::string_view, Category, std::less<>>& table() {
  static const auto by_name = [] {
    const Group groups[] = {
        {Category::network, std::begin(kNetwork), std::end(kNetwork)},
        {Category::processes, std::begin(kProcesses), std::end(kProcesses)},
        {Category::files, std::begin(kFiles), std::end(kFiles)},
        {Category::privileges, std::begin(kPrivileges), std::end(kPrivileges)},
        {Category::ipc, std::begin(kIpc), std::end(kIpc)},
        {Category::time, std::begin(kTime), std::end(kTime)},
        {Category::memory, std::begin(kMemory), std::end(kMemory)},
        {Category::signals, std::begin(kSignals), std::end(kSignals)},
        {Category::kernel, std::begin(kKernel), std::end(kKernel)},
        {Category::system, std::begin(kSystem), std::end(kSystem)},
    };
    std::map<std::string_view, Category, std::less<>> out;
    for (const Group& g : groups)
      for (const std::string_view* name = g.begin; name != g.end; ++name) {
        // Exactly one category each. Checked here rather than in a static_assert: comparing
        // every pair of 380 names is past clang's constexpr step limit (the fuzz build).
        if (!out.emplace(*name, g.category).second) {
          throw std::logic_error("syscall " + std::string(*name) + " is listed in two categories");
        }
      }
    return out;
  }();
  return by_name;
}

}  // namespace

std::string_view to_string(Category category) {
  switch (category) {
    case Category::network:
      return "network";
    case Category::processes:
      return "processes";
    case Category::files:
      return "files";
    case Category::privileges:
      return "privileges";
    case Category::ipc:
      return "ipc";
    case Category::time:
      return "time";
    case Category::memory:
      return "memory";
    case Category::signals:
      return "signals";
    case Category::kernel:
      return "kernel";
    case Category::system:
      return "system";
  }
  return "system";
}

std::string_view title(Category category) {
  switch (category) {
    case Category::ipc:
      return "IPC";
    case Category::kernel:
      return "kernel interfaces";
    default:
      return to_string(category);
  }
}

std::optional<Category> category_of(std::string_view syscall) {
  const auto& t = table();
  auto it = t.find(syscall);
  if (it == t.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> syscalls_in(Category category) {
  std::vector<std::string> out;
  for (const std::string& name : all_syscall_names())
    if (category_of(name) == category) out.push_back(name);
  return out;
}

}  // namespace jail::policy
