// Host side: moving bytes both ways between the tool and the server until both are done.
#pragma once

#include <cstdint>

namespace jail::egress {

struct Transfer {
  std::uint64_t bytes_out = 0;  // tool to server
  std::uint64_t bytes_in = 0;   // server to tool
};

// Relays until each direction has reached its end (passed on as shutdown(SHUT_WR)) or one side
// failed (then both are shut down). splice(2) through a pipe: the bytes never enter user space.
[[nodiscard]] Transfer relay(int client, int upstream);

}  // namespace jail::egress
