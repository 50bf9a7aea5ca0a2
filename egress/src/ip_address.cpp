// Both sides: text and socket forms of IP addresses, and prefix matching.
#include "egress/ip_address.hpp"

#include <arpa/inet.h>

#include <cstring>

namespace jail::egress {

bool IpRange::contains(const IpAddress& address) const {
  if (address.family != base.family) return false;
  const int whole_bytes = prefix_bits / 8;
  if (std::memcmp(address.bytes.data(), base.bytes.data(), whole_bytes) != 0) return false;
  const int rest_bits = prefix_bits % 8;
  if (rest_bits == 0) return true;
  const auto mask = static_cast<std::uint8_t>(0xff << (8 - rest_bits));
  return (address.bytes[whole_bytes] & mask) == (base.bytes[whole_bytes] & mask);
}

namespace {

std::optional<IpAddress> parse_family(std::string_view text, sa_family_t family) {
  // inet_pton needs a terminated string; no address text is longer than 45 characters.
  if (text.empty() || text.size() > 45) return std::nullopt;
  const std::string terminated(text);
  IpAddress address;
  address.family = family;
  if (inet_pton(family, terminated.c_str(), address.bytes.data()) != 1) return std::nullopt;
  return address;
}

}  // namespace

std::optional<IpAddress> parse_ipv4(std::string_view text) {
  return parse_family(text, AF_INET);
}

std::optional<IpAddress> parse_ipv6(std::string_view text) {
  return parse_family(text, AF_INET6);
}

std::optional<IpAddress> parse_ip(std::string_view text) {
  if (auto v4 = parse_ipv4(text)) return v4;
  return parse_ipv6(text);
}

IpAddress address_of(const sockaddr_in& socket_address) {
  IpAddress address;
  address.family = AF_INET;
  std::memcpy(address.bytes.data(), &socket_address.sin_addr, 4);
  return address;
}

IpAddress address_of(const sockaddr_in6& socket_address) {
  IpAddress address;
  address.family = AF_INET6;
  std::memcpy(address.bytes.data(), &socket_address.sin6_addr, 16);
  return address;
}

std::string to_string(const IpAddress& address) {
  char text[INET6_ADDRSTRLEN] = {};
  if (inet_ntop(address.family, address.bytes.data(), text, sizeof text) == nullptr) return "?";
  return text;
}

IpAddress embedded_ipv4(const IpAddress& ipv6, int offset) {
  IpAddress v4;
  v4.family = AF_INET;
  std::memcpy(v4.bytes.data(), ipv6.bytes.data() + offset, 4);
  return v4;
}

}  // namespace jail::egress
