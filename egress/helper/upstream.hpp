// Host side: from an allowed host to a connected socket: resolution, the address guard, connect.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "egress/address_guard.hpp"
#include "egress/allow_list.hpp"
#include "egress/request_target.hpp"
#include "unique_fd.hpp"

namespace jail::egress {

struct Resolution {
  std::vector<IpAddress> permitted;  // in the resolver's order
  std::string refused;               // the first guarded address and why ("127.0.0.1: loopback…")
  bool private_refused = false;      // --allow-private would have opened one
  std::string error;                 // the resolver's failure, when it failed
};

// The authority's addresses that may be reached: an IP literal or a name's addresses from
// getaddrinfo, each through the guard unless the allow-list opens it (refusal_of).
[[nodiscard]] Resolution resolve_permitted(const Authority& authority, const AllowList& allow_list,
                                           PrivateRanges private_ranges);

struct Connected {
  UniqueFd socket;    // blocking, valid on success
  IpAddress address;  // the one that answered
  std::string error;  // the last failure otherwise
};

// The first address that accepts a connection within `timeout` (all attempts together).
[[nodiscard]] Connected connect_first(const std::vector<IpAddress>& addresses, std::uint16_t port,
                                      std::chrono::milliseconds timeout);

}  // namespace jail::egress
