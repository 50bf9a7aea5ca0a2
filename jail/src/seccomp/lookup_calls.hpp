// The syscalls that look a path up in the filesystem, and where their arguments are: what
// LookupTrace::record routes past the supervisor (see lookup_policy.hpp, lookup_recorder.hpp).
#pragma once

#include <sys/syscall.h>

#include <array>

namespace jail {

// Where a call says that it stops at a symlink at the end of the path (FinalLink).
enum class NoFollow {
  never,       // the final link is followed: stat, access, execve, chdir, …
  always,      // lstat, readlink, readlinkat
  at_flags,    // AT_SYMLINK_NOFOLLOW in flags_arg
  open_flags,  // O_NOFOLLOW, or O_CREAT|O_EXCL, in flags_arg
  open_how,    // the same in the struct open_how flags_arg points to, or RESOLVE_NO_SYMLINKS
};

struct LookupCall {
  int number;
  const char* name;
  int dirfd_arg;  // the directory a relative path starts from; -1: the working directory
  int path_arg;
  // An argument whose AT_EMPTY_PATH bit makes the call act on the fd itself (glibc's fstat is
  // newfstatat(fd, "", AT_EMPTY_PATH)); -1: none. Such calls are kept in the kernel.
  int empty_path_flags_arg;
  NoFollow no_follow = NoFollow::never;
  int flags_arg = -1;  // for NoFollow::at_flags, open_flags and open_how
  // A NULL path makes the call act on the dirfd itself (futimens is utimensat(fd, NULL, …)).
  // Such calls are kept in the kernel too.
  bool null_path_is_fd = false;
};

// Linux 6.6's fchmodat (with flags; glibc 2.39 uses it for fchmodat(…, AT_SYMLINK_NOFOLLOW)),
// newer than Debian 12's headers.
inline constexpr int kSysFchmodat2 = 452;

// The kernel's faccessat and fchmodat take no flags (glibc's faccessat(…, AT_SYMLINK_NOFOLLOW)
// is faccessat2), and creat is O_CREAT|O_WRONLY|O_TRUNC: they follow the final link. The calls
// that change a file's times, owner or mode are lookups too: `cp -p`, `tar x` and `install` set
// them on paths the root must have.
inline constexpr std::array kLookupCalls = {
    LookupCall{SYS_open, "open", -1, 0, -1, NoFollow::open_flags, 1},
    LookupCall{SYS_creat, "creat", -1, 0, -1},
    LookupCall{SYS_openat, "openat", 0, 1, -1, NoFollow::open_flags, 2},
    LookupCall{SYS_openat2, "openat2", 0, 1, -1, NoFollow::open_how, 2},
    LookupCall{SYS_execve, "execve", -1, 0, -1},
    LookupCall{SYS_execveat, "execveat", 0, 1, -1, NoFollow::at_flags, 4},
    LookupCall{SYS_stat, "stat", -1, 0, -1},
    LookupCall{SYS_lstat, "lstat", -1, 0, -1, NoFollow::always},
    LookupCall{SYS_newfstatat, "newfstatat", 0, 1, 3, NoFollow::at_flags, 3},
    LookupCall{SYS_statx, "statx", 0, 1, 2, NoFollow::at_flags, 2},
    LookupCall{SYS_access, "access", -1, 0, -1},
    LookupCall{SYS_faccessat, "faccessat", 0, 1, -1},
    LookupCall{SYS_faccessat2, "faccessat2", 0, 1, -1, NoFollow::at_flags, 3},
    LookupCall{SYS_readlink, "readlink", -1, 0, -1, NoFollow::always},
    LookupCall{SYS_readlinkat, "readlinkat", 0, 1, -1, NoFollow::always},
    LookupCall{SYS_chdir, "chdir", -1, 0, -1},
    LookupCall{SYS_statfs, "statfs", -1, 0, -1},
    LookupCall{SYS_utimensat, "utimensat", 0, 1, 3, NoFollow::at_flags, 3, true},
    LookupCall{SYS_futimesat, "futimesat", 0, 1, -1, NoFollow::never, -1, true},
    LookupCall{SYS_utime, "utime", -1, 0, -1},
    LookupCall{SYS_utimes, "utimes", -1, 0, -1},
    LookupCall{SYS_fchownat, "fchownat", 0, 1, 4, NoFollow::at_flags, 4},
    LookupCall{SYS_chown, "chown", -1, 0, -1},
    LookupCall{SYS_lchown, "lchown", -1, 0, -1, NoFollow::always},
    LookupCall{SYS_fchmodat, "fchmodat", 0, 1, -1},
    LookupCall{kSysFchmodat2, "fchmodat2", 0, 1, 3, NoFollow::at_flags, 3},
    LookupCall{SYS_chmod, "chmod", -1, 0, -1},
    LookupCall{SYS_truncate, "truncate", -1, 0, -1},
};

[[nodiscard]] constexpr const LookupCall* find_lookup_call(int number) {
  for (const LookupCall& call : kLookupCalls) {
    if (call.number == number) return &call;
  }
  return nullptr;
}

}  // namespace jail
