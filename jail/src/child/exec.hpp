// Child side: execve the tool, looking argv[0] up on the jail's PATH (not the caller's).
#pragma once

#include "child/plan.hpp"

namespace jail::child {

// Reports exec_failed with the errno execvp would give, then exits 127 (not found) or 126.
[[noreturn]] void exec_tool(const Plan& plan);

}  // namespace jail::child
