// Host side: one tool connection, from its first request to its last byte.
#pragma once

#include <cstdint>

#include "egress/address_guard.hpp"
#include "egress/allow_list.hpp"
#include "report.hpp"
#include "unique_fd.hpp"

namespace jail::egress {

struct ProxyRules {
  AllowList allow_list;
  PrivateRanges private_ranges = PrivateRanges::refused;
};

// Reads the request, decides, reports, connects and relays; every refusal is answered and
// reported. Runs on the connection's own thread.
void serve_connection(UniqueFd client, std::uint64_t id, const ProxyRules& rules, Report& report);

}  // namespace jail::egress
