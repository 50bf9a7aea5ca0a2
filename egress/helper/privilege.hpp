// Host side: the helper gives up root and every capability before it touches tool data.
#pragma once

#include "options.hpp"

namespace jail::egress {

// As root: to --uid/--gid (both required, neither 0), no groups. Otherwise only checks that
// --uid/--gid name the caller. Then clears every capability set and verifies all of it; throws
// SetupError if anything is left.
void drop_privileges(const Options& options);

// Not dumpable, killed with its parent, no new privileges. After drop_privileges: a uid change
// clears the parent-death signal.
void harden_process(pid_t parent);

}  // namespace jail::egress
