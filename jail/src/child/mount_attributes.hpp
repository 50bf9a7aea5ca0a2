// The attributes a bind is sealed with before it is attached anywhere; shared by the parent,
// which opens the tool's bind sources, and the runsc keeper, which opens its own.
#pragma once

#include <fcntl.h>
#include <sys/mount.h>

#include "child/plan.hpp"
#include "child/syscalls.hpp"

namespace jail::child {

// Never suid; devices only where asked (the /dev nodes).
[[gnu::always_inline]] inline unsigned bind_attributes(const MountOp& op) {
  unsigned attr = MOUNT_ATTR_NOSUID;
  if (!op.allow_devices) attr |= MOUNT_ATTR_NODEV;
  if (!op.allow_exec) attr |= MOUNT_ATTR_NOEXEC;
  if (op.read_only) attr |= MOUNT_ATTR_RDONLY;
  return attr;
}

[[gnu::always_inline]] inline int set_attributes(int mount_fd, unsigned attr, bool recursive) {
  mount_attr request{};
  request.attr_set = attr;
  return ::mount_setattr(mount_fd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &request,
                         sizeof request);
}

}  // namespace jail::child
