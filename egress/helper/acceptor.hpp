// Host side: the helper's life after set-up: accepting tool connections until jail goes.
#pragma once

#include "connection.hpp"
#include "report.hpp"

namespace jail::egress {

constexpr int kMaxConnections = 256;

// Accepts on listen_fd, one thread per connection (kMaxConnections at most, beyond that a 503);
// exits the process as soon as the report socket's peer closes.
[[noreturn]] void serve_until_jail_goes(int listen_fd, int report_fd, const ProxyRules& rules,
                                        Report& report);

}  // namespace jail::egress
