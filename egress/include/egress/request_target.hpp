// Host side: the request targets a proxy accepts, read by hand (small and fuzzed): the
// authority form of CONNECT and the absolute form "http://host[:port]/path?query".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "egress/ip_address.hpp"

namespace jail::egress {

struct Authority {
  std::string host;                  // a normalized host name, or an address's text
  std::optional<IpAddress> address;  // set when the host is an IP literal
  std::uint16_t port = 0;

  [[nodiscard]] std::string text() const;  // "host:port", "[v6]:port"
};

// "host:port" or "[v6]:port"; the port is required. Nothing when it is not one.
[[nodiscard]] std::optional<Authority> parse_authority_form(std::string_view target);

struct AbsoluteTarget {
  Authority authority;        // port 80 when none is written
  std::string origin_target;  // "/path?query" as the origin server is sent it
};

// "http://host[:port][/path][?query]" (scheme in any case; no user info, no fragment sent on).
[[nodiscard]] std::optional<AbsoluteTarget> parse_absolute_http(std::string_view target);

}  // namespace jail::egress
