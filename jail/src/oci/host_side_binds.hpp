// Parent side: which binds of a run-once bundle runsc's own process makes, inside the bundle's
// rootfs, before runsc runs (runsc/keeper.hpp), instead of listing them in config.json.
//
// gVisor sets up every bind of config.json at start-up — a mount in its gofer, a connection, a
// mount in the sentry: ~3-6 ms each here, and the host-minimal root has ~25. A bind already in the
// rootfs when runsc starts is part of the root the gofer serves (it binds the rootfs with its
// submounts) and costs gVisor nothing. runsc's process makes them in a mount namespace of its
// own, so the host's mount table never holds them.
#pragma once

#include <vector>

#include "child/plan.hpp"
#include "plan_builder.hpp"

namespace jail::oci {

// Per op of `plan`, whether runsc's process binds it: a read-only bind that may run programs
// and opens no devices — the root runsc serves is read-only, so a writable bind stays the
// runtime's, and so do noexec and device binds, whose flags the sentry enforces on its own
// mounts — that nothing earlier in the plan and left to the runtime covers. Such a mount at or
// above its target (a tmpfs, a writable bind, the /dev the runtime makes), or an entry at its
// path (a symlink, a file), would in the native run lie under it; mounted by runsc later, it
// would lie above. An earlier mkdir is only a directory on the way, and an earlier bind that
// runsc's process makes is made first: a bind inside it is made as natively, its target
// resolved beneath the root with no symlink followed at the end (the runtime would follow
// one, and a link in a bound directory would lead its bind anywhere in the jail).
[[nodiscard]] std::vector<bool> host_side_binds(const child::Plan& plan,
                                                const std::vector<OpDescription>& descriptions);

}  // namespace jail::oci
