// Child side: the jail's own pty. The caller's terminal never reaches the tool (TIOCSTI/TIOCLINUX
// injection, CVE-2017-5226); the tool gets the slave of a pty from the jail's devpts, and the
// parent relays the master.
#pragma once

#include "child/plan.hpp"

namespace jail::child {

// Opens a pty in the jail's /dev/pts, sends the master to the parent and returns the slave.
[[nodiscard]] int open_pty(const Plan& plan);

// In the tool, after setsid: the slave becomes the controlling terminal and the stdio fds in
// plan.pty_fds.
void attach_pty(const Plan& plan, int slave);

}  // namespace jail::child
