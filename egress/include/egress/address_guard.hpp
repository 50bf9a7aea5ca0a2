// Host side: which resolved addresses the proxy never connects to unless the allow-list names
// them itself, so a name that resolves (or is re-pointed) to the host, the cloud's metadata
// service or the local network does not become a way in.
#pragma once

#include <optional>
#include <string>

#include "egress/ip_address.hpp"

namespace jail::egress {

enum class PrivateRanges { refused, allowed };  // allowed: --allow-private

// A short reason ("loopback 127.0.0.0/8") when `address` is refused, nothing when it may be
// reached. IPv4-mapped (::ffff:0:0/96) and NAT64 (64:ff9b::/96) addresses are judged by the IPv4
// address they carry.
[[nodiscard]] std::optional<std::string> refusal_of(const IpAddress& address,
                                                    PrivateRanges private_ranges);

}  // namespace jail::egress
