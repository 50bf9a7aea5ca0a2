// Parent side: who the tool is inside the jail and on the host, and the uid/gid maps that say so.
#pragma once

#include <sys/types.h>

#include <string>

#include "jail/spec.hpp"

namespace jail {

struct Identity {
  uid_t uid = 0;  // the tool's ids inside the jail
  gid_t gid = 0;
  uid_t host_uid = 0;  // the same ids as the host sees them
  gid_t host_gid = 0;
  std::string user_name;  // for the generated /etc/passwd
  std::string uid_map;    // contents for /proc/PID/uid_map
  std::string gid_map;
  bool deny_setgroups = false;  // the kernel requires it for a gid map written without CAP_SETGID
};

// A root caller's tool runs as 1000:1000 inside (or --uid/--gid), which is the unprivileged
// 65534:65534 (nobody) on the host; the setup steps before the drop run as the caller (inside
// uid 0) so that root-owned host paths can be bound. Any other caller's tool runs as that
// caller mapped to itself (or to --uid/--gid inside), the only map it may write.
[[nodiscard]] Identity choose_identity(const Spec& spec, uid_t caller_uid, gid_t caller_gid);

// Writes the maps for the child `pid`; throws jail::Error naming the file on failure.
void write_id_maps(pid_t pid, const Identity& identity);

}  // namespace jail
