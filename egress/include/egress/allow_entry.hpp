// Both sides: one `--net-allow` entry (NAME[:PORT], *.NAME[:PORT], an IP address or a CIDR
// range), parsed once so jail can refuse a bad entry before anything starts.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "egress/ip_address.hpp"

namespace jail::egress {

enum class EntryKind {
  name,           // exactly this host name
  names_below,    // *.example.com: any name below example.com, not example.com itself
  address_range,  // an IP address (a full-length prefix) or a CIDR range
};

struct AllowEntry {
  std::string text;  // as written, for messages
  EntryKind kind = EntryKind::name;
  std::string name;                  // normalized; for names_below the suffix without "*."
  IpRange range;                     // for address_range
  std::vector<std::uint16_t> ports;  // 443 and 80 when the entry names none
};

// A `--net-allow` entry that cannot be parsed; what() says what failed, on what and what to do.
class EntryError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

[[nodiscard]] AllowEntry parse_allow_entry(std::string_view text);

// For jail's up-front validation of its flags: throws EntryError or returns.
void check_allow_entry(std::string_view text);

}  // namespace jail::egress
