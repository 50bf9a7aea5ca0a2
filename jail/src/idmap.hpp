// Parent side, root callers: idmapped binds. A bind of the caller's is shown to the tool as its
// own: files of the bound directory's owner appear as the tool's ids, and what the tool creates
// lands on the host as that owner's — the caller's, for the caller's own trees — not as the
// jail's host ids (id_slot.hpp), which no one on the host knows.
#pragma once

#include <sys/types.h>

#include <map>
#include <utility>

#include "unique_fd.hpp"

namespace jail {

// The user namespaces the idmapped mounts take their maps from, one per owner: `owner` ids
// (host) become `tool_host_id` (the jail's host ids, which the tool's namespace maps to the tool).
class IdmapNamespaces {
 public:
  explicit IdmapNamespaces(uid_t tool_host_id) : tool_host_id_(tool_host_id) {}
  // A user namespace whose maps are "OWNER_UID TOOL 1" and "OWNER_GID TOOL 1", made once per
  // owner. Throws jail::Error (step "idmap").
  [[nodiscard]] int for_owner(uid_t uid, gid_t gid);

 private:
  uid_t tool_host_id_;
  std::map<std::pair<uid_t, gid_t>, UniqueFd> made_;
};

}  // namespace jail
