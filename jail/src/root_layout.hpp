// Parent side: the mounts that make up a jail's root, in the order the child applies them.
#pragma once

#include "identity.hpp"
#include "jail/spec.hpp"
#include "plan_builder.hpp"

namespace jail {

// The host-minimal root (read-only /usr and friends, a small /etc) or the --rootfs directory,
// then /proc, /dev, /tmp, then the caller's own mounts in the order given.
void add_root_layout(PlanBuilder& builder, const Spec& spec, const Identity& identity);

}  // namespace jail
