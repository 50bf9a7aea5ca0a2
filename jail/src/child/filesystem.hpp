// Child side: assemble the new root from the plan's mount ops and pivot into it.
#pragma once

#include "child/plan.hpp"
#include "step.hpp"

namespace jail::child {

// On return the process's root and cwd are the new root ("/"), the old root is detached and the
// root mount is read-only. Any failure is reported and ends the process.
void build_root(Plan& plan);

// Attaches the bind `op` inside `root` (an O_PATH fd of a directory of this process's own,
// private mount namespace) as build_root attaches it in the jail's root: the source a sealed copy
// of its tree, the target resolved beneath `root` and its mount point made. For runsc's process
// (runsc/keeper.hpp), which binds the host-minimal root into the bundle's rootfs. 0 (an optional
// op whose source is missing is skipped), or errno with `step` set to the step that failed.
[[nodiscard]] int bind_beneath(int root, MountOp& op, Step& step);

}  // namespace jail::child
