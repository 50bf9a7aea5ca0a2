// Child side: execve the tool, looking argv[0] up on the jail's PATH (not the caller's).
#pragma once

#include "child/plan.hpp"

namespace jail::child {

// The exec_failed report's detail when execve gave ENOENT for a command path that exists: what
// is missing is its #! interpreter or its ELF loader, not the command.
inline constexpr int kExecCommandExists = 1;

// Whether argv[0] names a file in the jail: at its path when it has a '/', else in one of the
// jail's PATH directories execvp would try. Asked before the filter goes on, which allows
// nothing but execve and the report from exec_tool.
[[nodiscard]] bool command_exists(const Plan& plan);

// Reports exec_failed with the errno execvp would give, then exits 127 (not found) or 126.
// command_exists: what command_exists() said; with it, an ENOENT is reported as the #!
// interpreter's or ELF loader's (kExecCommandExists).
[[noreturn]] void exec_tool(const Plan& plan, bool command_exists);

}  // namespace jail::child
