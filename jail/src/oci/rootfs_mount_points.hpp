// Parent side: a bundle over the caller's own --rootfs. A native run mounts that root read-only
// and refuses a mount whose point it lacks; an OCI runtime (runsc's gofer, runc) would make the
// point in the caller's directory on the host, as root. The bundle is checked first, so that a
// runsc run and an exported bundle leave the root as the native run does: untouched.
#pragma once

#include <filesystem>
#include <vector>

#include "child/plan.hpp"
#include "plan_builder.hpp"

namespace jail::oci {

// Throws jail::Error ("mount", ENOENT) naming the first mount of `plan` whose point lies in the
// root itself (not inside an earlier mount) and is missing from `rootfs`, looked up inside it
// (its symlinks resolved within it, never out of it). Mounts under /dev are the runtime's own.
void check_rootfs_mount_points(const child::Plan& plan,
                               const std::vector<OpDescription>& descriptions,
                               const std::filesystem::path& rootfs);

}  // namespace jail::oci
