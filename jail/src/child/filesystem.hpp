// Child side: assemble the new root from the plan's mount ops and pivot into it.
#pragma once

#include "child/plan.hpp"

namespace jail::child {

// On return the process's root and cwd are the new root ("/"), the old root is detached and the
// root mount is read-only. Any failure is reported and ends the process.
void build_root(Plan& plan);

}  // namespace jail::child
