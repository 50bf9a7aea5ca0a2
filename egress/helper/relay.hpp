// Host side: moving bytes both ways between the tool and the server until both are done.
#pragma once

#include <atomic>
#include <cstdint>

#include "report.hpp"

namespace jail::egress {

// Moves what `from` sends to `to` until `from` ends (passed on as shutdown(SHUT_WR)) or either
// fails (then both are shut down, so the other direction's blocked splice returns too). `moved`
// counts as it goes. splice(2) through a pipe: the bytes never enter user space.
void pump(int from, int to, std::atomic<std::uint64_t>& moved);

// Both directions until both are done, the server's on a thread of its own.
void relay(int client, int upstream, Traffic& traffic);

}  // namespace jail::egress
