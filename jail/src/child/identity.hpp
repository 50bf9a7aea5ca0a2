// Child side: become the tool's identity with no way back — every capability set empty,
// no_new_privs, securebits locked. Fails closed: any step that cannot be confirmed ends the run.
#pragma once

#include "child/plan.hpp"

namespace jail::child {

void drop_identity(const Plan& plan);

}  // namespace jail::child
