// The syscalls that look a path up in the filesystem, and where their arguments are: what
// LookupTrace::record routes past the supervisor (see lookup_policy.hpp, lookup_recorder.hpp).
#pragma once

#include <sys/syscall.h>

#include <array>

namespace jail {

struct LookupCall {
  int number;
  const char* name;
  int dirfd_arg;  // the directory a relative path starts from; -1: the working directory
  int path_arg;
  // An argument whose AT_EMPTY_PATH bit makes the call act on the fd itself (glibc's fstat is
  // newfstatat(fd, "", AT_EMPTY_PATH)); -1: none. Such calls are kept in the kernel.
  int empty_path_flags_arg;
};

inline constexpr std::array kLookupCalls = {
    LookupCall{SYS_open, "open", -1, 0, -1},
    LookupCall{SYS_creat, "creat", -1, 0, -1},
    LookupCall{SYS_openat, "openat", 0, 1, -1},
    LookupCall{SYS_openat2, "openat2", 0, 1, -1},
    LookupCall{SYS_execve, "execve", -1, 0, -1},
    LookupCall{SYS_execveat, "execveat", 0, 1, -1},
    LookupCall{SYS_stat, "stat", -1, 0, -1},
    LookupCall{SYS_lstat, "lstat", -1, 0, -1},
    LookupCall{SYS_newfstatat, "newfstatat", 0, 1, 3},
    LookupCall{SYS_statx, "statx", 0, 1, 2},
    LookupCall{SYS_access, "access", -1, 0, -1},
    LookupCall{SYS_faccessat, "faccessat", 0, 1, -1},
    LookupCall{SYS_faccessat2, "faccessat2", 0, 1, -1},
    LookupCall{SYS_readlink, "readlink", -1, 0, -1},
    LookupCall{SYS_readlinkat, "readlinkat", 0, 1, -1},
    LookupCall{SYS_chdir, "chdir", -1, 0, -1},
    LookupCall{SYS_statfs, "statfs", -1, 0, -1},
};

[[nodiscard]] constexpr const LookupCall* find_lookup_call(int number) {
  for (const LookupCall& call : kLookupCalls) {
    if (call.number == number) return &call;
  }
  return nullptr;
}

}  // namespace jail
