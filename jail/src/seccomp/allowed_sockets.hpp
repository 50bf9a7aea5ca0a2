// Parent side: the host socket files --allow-socket names, found once before the tool starts and
// then known by inode. Re-resolved at each connect, the path could be turned by the tool (a link
// in /tmp, a renamed directory in a writable bind) towards any socket the jail shows.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "jail/spec.hpp"

namespace jail {

struct PinnedSocket {
  std::string path;  // as the jail shows it
  dev_t dev = 0;
  ino_t ino = 0;
};

// Each of spec.allow_sockets, through the bind that shows it, with no symbolic link anywhere
// on the way. Throws jail::Error (step "spec") naming a path no bind shows, one that is missing,
// reached through a link, or not a socket.
[[nodiscard]] std::vector<PinnedSocket> pin_allowed_sockets(const Spec& spec);

}  // namespace jail
