#include "oci/rootfs_mount_points.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "jail/error.hpp"
#include "spec_check.hpp"
#include "unique_fd.hpp"

namespace jail::oci {

void check_rootfs_mount_points(const child::Plan& plan,
                               const std::vector<OpDescription>& descriptions,
                               const std::filesystem::path& rootfs) {
  const UniqueFd root(::open(rootfs.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root.valid()) {
    const int err = errno;
    throw Error("rootfs", err,
                fmt::format("cannot open --rootfs {}: {}", rootfs.string(), std::strerror(err)));
  }
  for (std::size_t i = 0; i < plan.op_count; ++i) {
    if (!child::is_mount(plan.ops[i].kind)) continue;
    const std::string& target = descriptions[i].target;
    if (jail_path_within(target, "/dev")) continue;
    bool inside_an_earlier_mount = false;
    for (std::size_t j = 0; j < i && !inside_an_earlier_mount; ++j) {
      inside_an_earlier_mount = child::is_mount(plan.ops[j].kind) &&
                                descriptions[j].target != target &&
                                jail_path_within(target, descriptions[j].target);
    }
    if (inside_an_earlier_mount) continue;
    open_how how{};
    how.flags = O_PATH | O_CLOEXEC;
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
    const std::string relative = target == "/" ? "." : target.substr(1);
    const UniqueFd found(
        static_cast<int>(::syscall(SYS_openat2, root.get(), relative.c_str(), &how, sizeof how)));
    if (found.valid()) continue;
    const int err = errno;
    throw Error("mount", err,
                fmt::format("{}: the mount point {} is not in --rootfs {} ({}), and jail never "
                            "writes to that root; create it there, or mount under /tmp",
                            descriptions[i].origin, target, rootfs.string(), std::strerror(err)));
  }
}

}  // namespace jail::oci
