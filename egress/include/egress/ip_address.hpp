// Both sides: IPv4 and IPv6 addresses and CIDR ranges as plain bytes, so the allow-list and the
// address guard compare them the same way whatever their family.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace jail::egress {

struct IpAddress {
  sa_family_t family = AF_UNSPEC;  // AF_INET (first 4 bytes used) or AF_INET6
  std::array<std::uint8_t, 16> bytes{};

  bool operator==(const IpAddress&) const = default;
  [[nodiscard]] int bit_count() const { return family == AF_INET ? 32 : 128; }
};

struct IpRange {
  IpAddress base;  // bits below the prefix are zero
  int prefix_bits = 0;

  [[nodiscard]] bool contains(const IpAddress& address) const;
};

// Only the strict dotted-quad and RFC 4291 text forms (inet_pton); "10.1" or "0x7f.1" are no
// address here, so they can never be read one way by the allow-list and another by a resolver.
[[nodiscard]] std::optional<IpAddress> parse_ipv4(std::string_view text);
[[nodiscard]] std::optional<IpAddress> parse_ipv6(std::string_view text);
[[nodiscard]] std::optional<IpAddress> parse_ip(std::string_view text);

[[nodiscard]] IpAddress address_of(const sockaddr_in& socket_address);
[[nodiscard]] IpAddress address_of(const sockaddr_in6& socket_address);
[[nodiscard]] std::string to_string(const IpAddress& address);

// The IPv4 address at byte `offset` of an IPv6 address (IPv4-mapped, NAT64 forms).
[[nodiscard]] IpAddress embedded_ipv4(const IpAddress& ipv6, int offset);

}  // namespace jail::egress
