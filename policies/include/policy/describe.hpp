// Human-readable syscalls for denial reports: `ptrace(PTRACE_ATTACH, 1)`, `ioctl(0, TIOCSTI,
// 0x7ffd…)`, `clone(CLONE_NEWUSER|SIGCHLD, …)`. Used by the supervisor's log line and Result.
#pragma once

#include <linux/seccomp.h>

#include <string>

#include "policy/evaluate.hpp"

namespace jail::policy {

// The syscall's name, or for another ABI "i386 syscall 20", "x32 syscall 39".
[[nodiscard]] std::string call_name(const struct seccomp_data& data);
// name(arg, …) with known constants named and trailing zero arguments left out; another ABI's
// call as call_name() says it.
[[nodiscard]] std::string describe_call(const struct seccomp_data& data);

// "ptrace(PTRACE_ATTACH, 1) by policy python.policy:12 → killed"
[[nodiscard]] std::string describe_decision(const struct seccomp_data& data,
                                            const Decision& decision);

}  // namespace jail::policy
