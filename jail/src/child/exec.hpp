// Child side: execve the tool, looking argv[0] up on the jail's PATH (not the caller's).
#pragma once

#include "child/plan.hpp"

namespace jail::child {

// The exec_failed report's detail when execve gave ENOENT for a command path that exists: what
// is missing is its #! interpreter or its ELF loader, not the command.
inline constexpr int kExecCommandExists = 1;

// Reports exec_failed with the errno execvp would give, then exits 127 (not found) or 126.
// command_exists: argv[0] has a '/' and was there before the filter went on (the check is made
// before, as the filter allows nothing but execve and the report from here).
[[noreturn]] void exec_tool(const Plan& plan, bool command_exists);

}  // namespace jail::child
