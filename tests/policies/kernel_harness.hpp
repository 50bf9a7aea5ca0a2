// Runs code in a forked child under a compiled filter, the way the jail does: no_new_privs,
// then seccomp(SECCOMP_SET_MODE_FILTER). Tests read the outcome from the exit status.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "policy/compile.hpp"

namespace jail::policy::testing {

struct ChildEnd {
  bool exited = false;
  int code = -1;       // exit code when exited
  int signal = 0;      // terminating signal otherwise
  std::string output;  // what the child wrote to the result pipe (or stdout for programs)
};

// Exit code a child uses when it could not install the filter, so tests tell it apart.
inline constexpr int kInstallFailed = 250;

// body runs after the filter is installed; it may write to `out_fd`; its return value is
// the exit code.
[[nodiscard]] ChildEnd run_filtered(const Program& program,
                                    const std::function<int(int out_fd)>& body);

// Runs argv (execve, absolute path) under the filter with stdout+stderr captured, in `cwd`,
// reading `stdin_text` (at most a pipe's buffer) on stdin.
[[nodiscard]] ChildEnd run_program(const Program& program, const std::vector<std::string>& argv,
                                   const std::string& cwd = "/",
                                   const std::string& stdin_text = "");

// The outcome of syscall(nr, args…) in a filtered child: the errno it failed with, 0 when it
// succeeded, -SIG when a signal ended the child.
[[nodiscard]] int syscall_outcome(const Program& program, long nr, std::vector<unsigned long> args);

}  // namespace jail::policy::testing
