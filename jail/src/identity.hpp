// Parent side: who the tool is inside the jail and on the host, and the uid/gid maps that say so.
#pragma once

#include <sys/types.h>

#include <optional>
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
  // A root caller's: the caller's binds and dry-run layers are idmapped from their directory's
  // owner (idmap.hpp). Under --policy none only the layers are (launch.cpp says why).
  bool idmap_binds = false;
  bool idmap_layers = false;
};

// A root caller's tool runs as 1000:1000 inside (or --uid/--gid), which is `own_host_id` on the
// host (id_slot.hpp: no other jail's, no user's), and that is the namespace's only id: the setup
// before the drop runs as the tool's ids too, with capabilities over the jail's namespaces only,
// and what it needs of host paths the parent opened (bind_sources.hpp). Any other caller's tool
// runs as that caller mapped to itself (or to --uid/--gid inside), the only map it may write.
// Without `own_host_id` (a bundle's layout, never run) a root caller's host ids read nobody.
[[nodiscard]] Identity choose_identity(const Spec& spec, uid_t caller_uid, gid_t caller_gid,
                                       std::optional<uid_t> own_host_id = std::nullopt);

// Writes the maps for the child `pid`; throws jail::Error naming the file on failure.
void write_id_maps(pid_t pid, const Identity& identity);

}  // namespace jail
