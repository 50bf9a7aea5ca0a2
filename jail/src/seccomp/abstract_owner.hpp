// Parent side: with --net host the jail shares the host's abstract Unix socket names, so a name
// alone does not say whose socket it is. The broker (connect_broker.hpp) lets the tool connect
// to a name only where a process of the jail holds the socket listening on it.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace jail {

enum class AbstractHolder {
  nobody,  // no stream or seqpacket socket listens on the name
  jail,    // a process of the jail holds the one that does
  other,   // someone else does, or it cannot be told
};

// Who it is that makes a socket the jail's: a root caller's jail is a host uid of its own, which
// no other process has; an unprivileged caller's tool is the caller's uid, so its processes
// (from the init down, by /proc's children lists) are read instead.
struct JailMembers {
  pid_t init = -1;               // the jail's init, a host pid
  std::optional<uid_t> own_uid;  // the jail's own host uid, when it has one
};

// Who holds the socket listening on the abstract `name` (without its leading NUL) in this
// process's network namespace: sock_diag finds it, with its owner's uid; then that uid, or the
// jail's processes' descriptors, say whose it is.
[[nodiscard]] AbstractHolder abstract_holder(const std::string& name, const JailMembers& jail);

// Whether the process `pid` with uid `uid` (host values, as SO_PEERCRED gives them) is the jail's.
[[nodiscard]] bool is_jail_process(pid_t pid, uid_t uid, const JailMembers& jail);

}  // namespace jail
