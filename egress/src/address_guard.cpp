// Host side: the ranges the address guard refuses, and why each is there.
#include "egress/address_guard.hpp"

namespace jail::egress {

namespace {

struct GuardedRange {
  const char* text;    // CIDR, parsed once
  const char* reason;  // what the range is, for the report
  bool is_private;     // opened by --allow-private
};

// Always refused: the host itself, link-local (where clouds put their metadata service),
// metadata addresses outside it, and what is no unicast destination at all.
constexpr GuardedRange kRanges[] = {
    {"0.0.0.0/8", "\"this network\" 0.0.0.0/8", false},
    {"127.0.0.0/8", "loopback 127.0.0.0/8", false},
    {"169.254.0.0/16", "link-local and cloud metadata 169.254.0.0/16", false},
    {"100.100.100.200/32", "cloud metadata (Alibaba) 100.100.100.200", false},
    {"192.0.0.192/32", "cloud metadata (Oracle) 192.0.0.192", false},
    {"168.63.129.16/32", "cloud host services (Azure) 168.63.129.16", false},
    {"224.0.0.0/4", "multicast 224.0.0.0/4", false},
    {"240.0.0.0/4", "reserved and broadcast 240.0.0.0/4", false},
    {"::1/128", "loopback ::1", false},
    {"::/128", "unspecified ::", false},
    {"::/96", "IPv4-compatible ::/96 (deprecated)", false},
    {"fe80::/10", "link-local fe80::/10", false},
    {"fec0::/10", "site-local fec0::/10 (deprecated)", false},
    {"fd00:ec2::254/128", "cloud metadata (AWS) fd00:ec2::254", false},
    {"ff00::/8", "multicast ff00::/8", false},
    // Transition forms that carry an IPv4 address elsewhere than the last 32 bits (6to4, Teredo,
    // the local-use NAT64 prefix): no tool of a jail needs them, and judging the embedded address
    // would mean decoding each form; refused unless named.
    {"2002::/16", "6to4 2002::/16", false},
    {"2001::/32", "Teredo 2001::/32", false},
    {"64:ff9b:1::/48", "local-use NAT64 64:ff9b:1::/48", false},
    // The local network, opened by --allow-private.
    {"10.0.0.0/8", "private 10.0.0.0/8", true},
    {"172.16.0.0/12", "private 172.16.0.0/12", true},
    {"192.168.0.0/16", "private 192.168.0.0/16", true},
    {"100.64.0.0/10", "shared address space 100.64.0.0/10", true},
    {"fc00::/7", "unique local fc00::/7", true},
};

IpRange range_of(const char* cidr) {
  const std::string_view text(cidr);
  const auto slash = text.find('/');
  return IpRange{*parse_ip(text.substr(0, slash)), std::stoi(std::string(text.substr(slash + 1)))};
}

std::optional<GuardRefusal> refusal_in_table(const IpAddress& address,
                                             PrivateRanges private_ranges) {
  for (const GuardedRange& guarded : kRanges) {
    if (guarded.is_private && private_ranges == PrivateRanges::allowed) continue;
    const IpRange range = range_of(guarded.text);
    if (range.contains(address)) return GuardRefusal{guarded.reason, range.prefix_bits};
  }
  return std::nullopt;
}

}  // namespace

std::optional<GuardRefusal> refusal_of(const IpAddress& address, PrivateRanges private_ranges) {
  if (address.family == AF_INET6) {
    static const IpRange mapped = range_of("::ffff:0:0/96");
    static const IpRange nat64 = range_of("64:ff9b::/96");
    for (const IpRange* carrier : {&mapped, &nat64}) {
      if (!carrier->contains(address)) continue;
      const IpAddress v4 = embedded_ipv4(address, 12);
      auto refusal = refusal_in_table(v4, private_ranges);
      if (refusal) {
        refusal->reason += " (as " + to_string(address) + ")";
        refusal->range_bits += 96;
      }
      return refusal;
    }
  }
  return refusal_in_table(address, private_ranges);
}

std::optional<GuardRefusal> refusal_of(const IpAddress& address, std::uint16_t port,
                                       const AllowList& allow_list, PrivateRanges private_ranges) {
  auto refusal = refusal_of(address, private_ranges);
  if (refusal && allow_list.names_address(address, port, refusal->range_bits)) return std::nullopt;
  return refusal;
}

}  // namespace jail::egress
