// Child side: start the tool from the jail's init and hand its seccomp listener to the parent.
#pragma once

#include <sys/types.h>

#include "child/plan.hpp"

namespace jail::child {

// Returns the tool's pid once it has called execve (or died trying). `pty_slave` is -1 without
// a pty.
[[nodiscard]] pid_t start_tool(const Plan& plan, int pty_slave);

}  // namespace jail::child
