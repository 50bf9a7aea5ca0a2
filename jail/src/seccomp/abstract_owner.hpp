// Parent side: with --net host the jail shares the host's abstract Unix socket names, so a name
// alone does not say whose socket it is. The broker (connect_broker.hpp) lets the tool connect
// to a name only where a process of the jail holds the socket listening on it.
#pragma once

#include <sys/types.h>

#include <string>

namespace jail {

enum class AbstractHolder {
  nobody,  // no stream or seqpacket socket listens on the name
  jail,    // a process of the jail holds the one that does
  other,   // someone else does, or it cannot be told
};

// Who holds the socket listening on the abstract `name` (without its leading NUL) in this
// process's network namespace, for the jail whose init is `init` (a host pid). Reads sock_diag
// for the socket, then the jail's processes' descriptors (from the init down, by /proc's
// children lists).
[[nodiscard]] AbstractHolder abstract_holder(const std::string& name, pid_t init);

}  // namespace jail
