// Host side: which resolved addresses the proxy never connects to unless the allow-list names
// them itself, so a name that resolves (or is re-pointed) to the host, the cloud's metadata
// service or the local network does not become a way in.
#pragma once

#include <optional>
#include <string>

#include "egress/allow_list.hpp"
#include "egress/ip_address.hpp"

namespace jail::egress {

enum class PrivateRanges { refused, allowed };  // allowed: --allow-private

struct GuardRefusal {
  std::string reason;  // short: "loopback 127.0.0.0/8"
  int range_bits = 0;  // the refused range's prefix length, counted in the address's family
};

// Why `address` is refused, nothing when it may be reached. IPv4-mapped (::ffff:0:0/96) and
// NAT64 (64:ff9b::/96) addresses are judged by the IPv4 address they carry.
[[nodiscard]] std::optional<GuardRefusal> refusal_of(const IpAddress& address,
                                                     PrivateRanges private_ranges);

// The same, unless an allow-list entry names the address on that port by itself or by a range
// no wider than the refused one: 10.0.0.0/8 opens 10.1.2.3, 0.0.0.0/0 opens no loopback.
[[nodiscard]] std::optional<GuardRefusal> refusal_of(const IpAddress& address, std::uint16_t port,
                                                     const AllowList& allow_list,
                                                     PrivateRanges private_ranges);

}  // namespace jail::egress
