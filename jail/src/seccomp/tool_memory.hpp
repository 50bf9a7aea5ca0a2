// Parent side: what the supervisor reads of a tool that waits in a seccomp notification: a
// path argument from its memory, and its /proc links (cwd, fds) as the jail sees them.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace jail {

// The NUL-terminated string at `address` in `pid`, at most PATH_MAX bytes (what the kernel
// accepts); nullopt when it cannot be read or is longer.
[[nodiscard]] std::optional<std::string> read_string(pid_t pid, std::uint64_t address);

// A link in the tool's /proc entry ("cwd", "fd/3"), relative to the tool's root: the path as the
// jail sees it; nullopt when gone or not in the filesystem (a pipe, a socket).
[[nodiscard]] std::optional<std::string> read_proc_link(pid_t pid, const std::string& name);

// A waiting call's path argument as the jail sees it: read at `address`, made absolute against
// `dirfd` (AT_FDCWD: the tool's working directory), lexically normal, without a trailing slash.
// "" for an empty path (AT_EMPTY_PATH, or an error the kernel reports); nullopt when unreadable.
[[nodiscard]] std::optional<std::string> path_argument(pid_t pid, std::uint64_t address, int dirfd);

}  // namespace jail
