#include "policy/learn_families.hpp"

#include <algorithm>

#include "policy/constants.hpp"

namespace jail::policy {
namespace {

// A member that does not bring its family in by itself.
FamilyMember companion(std::string_view syscall) {
  return FamilyMember{.syscall = syscall, .triggers = false};
}

std::vector<LearnFamily> make_families() {
  return {
      {"memory",
       "the tool's own memory: mapping, protecting and advising on it reaches nothing else",
       {{"mmap"},
        {"munmap"},
        {"mprotect"},
        {"mremap"},
        {"brk"},
        {"mincore"},
        {"msync"},
        {"madvise",
         {"MADV_NORMAL", "MADV_RANDOM", "MADV_SEQUENTIAL", "MADV_WILLNEED", "MADV_DONTNEED",
          "MADV_FREE", "MADV_HUGEPAGE", "MADV_NOHUGEPAGE", "MADV_DONTDUMP", "MADV_DODUMP",
          "MADV_DONTFORK", "MADV_DOFORK", "MADV_COLD", "MADV_PAGEOUT"}}}},
      {"program start",
       "what the dynamic loader and libc do before main: the tool's own thread area and limits",
       {{"arch_prctl"},
        {"set_tid_address"},
        {"set_robust_list"},
        {"rseq"},
        {"prlimit64"},
        {"getrlimit"},
        {"getrandom"},
        {"uname"},
        {"sysinfo"}}},
      {"reading files",
       "opening, reading and looking up files: the jail's mounts decide which exist and which are "
       "read-only",
       {{"read"},       {"readv"},     {"pread64"},   {"preadv"},    {"preadv2"},
        {"lseek"},      {"open"},      {"openat"},    {"close"},     {"close_range"},
        {"fstat"},      {"fadvise64"}, {"readahead"}, {"statfs"},    {"fstatfs"},
        {"getxattr"},   {"lgetxattr"}, {"fgetxattr"}, {"listxattr"}, {"llistxattr"},
        {"flistxattr"}, {"sendfile"},  {"splice"}}},
      {"directory traversal",
       "walking directories and resolving paths and links, as ls, find and git do",
       {{"getdents64"},
        {"getdents"},
        {"getcwd"},
        {"chdir"},
        {"fchdir"},
        {"readlink"},
        {"readlinkat"},
        {"stat"},
        {"lstat"},
        {"newfstatat"},
        {"statx"},
        {"access"},
        {"faccessat"},
        {"faccessat2"}}},
      {"writing files",
       "changing files the mounts leave writable; set-id bits stay refused by the baseline",
       {companion("write"), companion("writev"), {"pwrite64"},        {"pwritev"},
        {"pwritev2"},       {"ftruncate"},       {"truncate"},        {"fsync"},
        {"fdatasync"},      {"fallocate"},       {"sync_file_range"}, {"copy_file_range"},
        {"rename"},         {"renameat"},        {"renameat2"},       {"unlink"},
        {"unlinkat"},       {"mkdir"},           {"mkdirat"},         {"rmdir"},
        {"link"},           {"linkat"},          {"symlink"},         {"symlinkat"},
        {"utime"},          {"utimes"},          {"utimensat"},       {"futimesat"},
        {"chmod"},          {"fchmod"},          {"fchmodat"},        {"umask"}}},
      {"file descriptor flags",
       "the tool's own descriptors: duplicating them and reading or setting their flags",
       {{"fcntl", {"F_DUPFD", "F_DUPFD_CLOEXEC", "F_GETFD", "F_SETFD", "F_GETFL", "F_SETFL"}}}},
      {"file locks",
       "advisory locks, as sqlite and git take them: they only make other lockers wait",
       {{"fcntl", {"F_GETLK", "F_SETLK", "F_SETLKW", "F_OFD_GETLK", "F_OFD_SETLK", "F_OFD_SETLKW"}},
        {"flock"}}},
      {"terminal queries",
       "asking what the tool's own descriptors are: isatty, the window size, bytes waiting",
       {{"ioctl", {"TCGETS", "TIOCGWINSZ", "TIOCGPGRP", "TIOCGSID", "FIONREAD"}}},
       true},
      {"threads",
       "threads share the tool's memory and rights, so a thread pool reaches nothing one thread "
       "cannot",
       {{.syscall = "clone", .flag = "CLONE_THREAD", .flag_set = true},
        companion("futex"),
        companion("set_robust_list"),
        companion("get_robust_list"),
        companion("rseq"),
        companion("gettid"),
        companion("tgkill"),
        companion("sched_yield"),
        companion("sched_getaffinity"),
        companion("membarrier")}},
      {"child processes",
       "processes started inside the jail get the same jail; pipes and descriptor copies wire "
       "them up",
       {{.syscall = "clone", .flag = "CLONE_THREAD", .flag_set = false},
        {"fork"},
        {"vfork"},
        {"wait4"},
        {"waitid"},
        companion("execve"),
        companion("pipe"),
        companion("pipe2"),
        companion("dup"),
        companion("dup2"),
        companion("dup3"),
        companion("close_range"),
        companion("kill"),
        companion("getppid"),
        companion("setpgid"),
        companion("getpgid"),
        companion("getpgrp")}},
      {"signals",
       "the tool's own signal handlers, masks and timers",
       {{"rt_sigaction"},
        {"rt_sigprocmask"},
        {"rt_sigreturn"},
        {"rt_sigpending"},
        {"rt_sigsuspend"},
        {"rt_sigtimedwait"},
        {"sigaltstack"},
        {"pause"},
        {"alarm"},
        {"getitimer"},
        {"setitimer"}}},
      {"time",
       "reading clocks and sleeping; setting a clock is not in it",
       {{"clock_gettime"},
        {"clock_getres"},
        {"gettimeofday"},
        {"time"},
        {"nanosleep"},
        {"clock_nanosleep"}}},
      {"waiting for events",
       "waiting on the tool's own descriptors",
       {{"poll"},
        {"ppoll"},
        {"select"},
        {"pselect6"},
        {"epoll_create"},
        {"epoll_create1"},
        {"epoll_ctl"},
        {"epoll_wait"},
        {"epoll_pwait"},
        {"epoll_pwait2"},
        {"eventfd"},
        {"eventfd2"}}},
      {"identity queries",
       "reading the tool's own ids; changing them is not in it",
       {{"getuid"},
        {"geteuid"},
        {"getgid"},
        {"getegid"},
        {"getresuid"},
        {"getresgid"},
        {"getgroups"}},
       true},
      {"process queries",
       "reading the tool's own process state and naming its threads",
       {{"getpid"},
        {"getpgrp"},
        {"getsid"},
        {"getrusage"},
        {"times"},
        {"getcpu"},
        {"getpriority"},
        {"capget"},
        {"prctl",
         {"PR_GET_NAME", "PR_SET_NAME", "PR_GET_DUMPABLE", "PR_GET_NO_NEW_PRIVS", "PR_GET_SECCOMP",
          "PR_CAPBSET_READ", "PR_GET_KEEPCAPS", "PR_GET_TIMERSLACK", "PR_GET_PDEATHSIG",
          "PR_GET_CHILD_SUBREAPER", "PR_GET_THP_DISABLE"}}},
       true},
  };
}

}  // namespace

const std::vector<LearnFamily>& learn_families() {
  static const std::vector<LearnFamily> families = make_families();
  return families;
}

bool covers(const FamilyMember& member, std::uint64_t value) {
  if (!member.flag.empty()) {
    const std::uint64_t flag = constant_value(member.flag).value_or(0);
    return ((value & flag) != 0) == member.flag_set;
  }
  if (member.values.empty()) return true;
  return std::any_of(member.values.begin(), member.values.end(),
                     [&](std::string_view name) { return constant_value(name) == value; });
}

}  // namespace jail::policy
