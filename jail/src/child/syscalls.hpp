// Thin wrappers for the syscalls the child side needs that glibc 2.36 does not wrap, or wraps
// with process-wide bookkeeping that is wrong after a raw clone (setxid broadcast to threads that
// do not exist in the child, fork's atfork handlers and malloc locks).
#pragma once

#include <linux/capability.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace jail::child::sys {

inline int openat2(int dirfd, const char* path, unsigned long flags, unsigned long long resolve) {
  open_how how{};
  how.flags = flags;
  how.resolve = resolve;
  return static_cast<int>(::syscall(SYS_openat2, dirfd, path, &how, sizeof how));
}

// Moves the calling task into the cgroup v1 `tasks` file open at `tasks_fd` ("0" is the caller
// itself). A task moving itself waits for no RCU grace period, where another process writing its
// pid does (5-15 ms here). Returns 0, or the errno.
inline int join_cgroup_v1(int tasks_fd) {
  ssize_t n;
  do {
    n = ::write(tasks_fd, "0", 1);
  } while (n < 0 && errno == EINTR);
  return n == 1 ? 0 : (n < 0 ? errno : EIO);
}

inline int pivot_root(const char* new_root, const char* put_old) {
  return static_cast<int>(::syscall(SYS_pivot_root, new_root, put_old));
}

inline int setresuid(uid_t uid) {
  return static_cast<int>(::syscall(SYS_setresuid, uid, uid, uid));
}
inline int setresgid(gid_t gid) {
  return static_cast<int>(::syscall(SYS_setresgid, gid, gid, gid));
}
inline int clear_groups() {
  return static_cast<int>(::syscall(SYS_setgroups, 0, nullptr));
}

inline int capset_empty() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  return static_cast<int>(::syscall(SYS_capset, &header, data));
}

// True when every capability in the effective, permitted and inheritable sets is clear.
inline bool capabilities_empty() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return false;
  for (const auto& word : data) {
    if (word.effective != 0 || word.permitted != 0 || word.inheritable != 0) return false;
  }
  return true;
}

}  // namespace jail::child::sys
