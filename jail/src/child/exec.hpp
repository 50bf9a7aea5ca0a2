// Child side: execve the tool, looking argv[0] up on the jail's PATH (not the caller's).
#pragma once

#include "child/plan.hpp"

namespace jail::child {

// The exec_failed report's detail when execve gave ENOENT for a command path that exists: what
// is missing is its #! interpreter or its ELF loader, not the command.
inline constexpr int kExecCommandExists = 1;

// The PATH searched for a bare command when the tool's environment has none, as execvp does.
inline constexpr const char* kPathWithoutPathVariable = "/usr/bin:/bin";

// Whether argv[0] names a file in the jail.
enum class CommandFile : bool { absent, present };

// Looks argv[0] up: at its path when it has a '/', else in each of the jail's PATH directories
// execvp would try. Asked before the filter goes on, which allows nothing but execve and the
// report from exec_tool.
[[nodiscard]] CommandFile find_command_file(const Plan& plan);

// Reports exec_failed with the errno execvp would give, then exits 127 (not found) or 126.
// `command`: what find_command_file said; when present, an ENOENT is reported as the #!
// interpreter's or ELF loader's (kExecCommandExists).
[[noreturn]] void exec_tool(const Plan& plan, CommandFile command);

}  // namespace jail::child
