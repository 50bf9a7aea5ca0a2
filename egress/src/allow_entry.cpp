// Both sides: parsing of `--net-allow` entries.
#include "egress/allow_entry.hpp"

#include <charconv>

#include "egress/host_name.hpp"

namespace jail::egress {

namespace {

constexpr std::string_view kForms =
    "write NAME[:PORT], *.NAME[:PORT], an IP address or a CIDR range";

[[noreturn]] void fail(std::string_view text, std::string_view problem) {
  throw EntryError("--net-allow \"" + std::string(text) + "\": " + std::string(problem) + "; " +
                   std::string(kForms));
}

std::uint16_t parse_port(std::string_view entry, std::string_view port) {
  unsigned value = 0;
  const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || error != std::errc() || end != port.data() + port.size() || value == 0 ||
      value > 65535) {
    fail(entry, "the port \"" + std::string(port) + "\" is not a number from 1 to 65535");
  }
  return static_cast<std::uint16_t>(value);
}

IpRange parse_range(std::string_view entry, std::string_view host) {
  const auto slash = host.find('/');
  const std::string_view address_text = host.substr(0, slash);
  const auto address = parse_ip(address_text);
  if (!address) fail(entry, "\"" + std::string(address_text) + "\" is not an IP address");
  IpRange range{*address, address->bit_count()};
  if (slash == std::string_view::npos) return range;
  const std::string_view bits = host.substr(slash + 1);
  int value = -1;
  const auto [end, error] = std::from_chars(bits.data(), bits.data() + bits.size(), value);
  if (bits.empty() || error != std::errc() || end != bits.data() + bits.size() || value < 0 ||
      value > address->bit_count()) {
    fail(entry, "the prefix length \"" + std::string(bits) + "\" is not a number from 0 to " +
                    std::to_string(address->bit_count()));
  }
  range.prefix_bits = value;
  IpRange masked = range;
  masked.base.bytes = {};
  for (int bit = 0; bit < value; ++bit) {
    masked.base.bytes[bit / 8] |= range.base.bytes[bit / 8] & (0x80 >> (bit % 8));
  }
  if (masked.base != range.base) {
    fail(entry, "the range has address bits set below its prefix (did you mean " +
                    to_string(masked.base) + "/" + std::to_string(value) + "?)");
  }
  return range;
}

// Splits "host:port", "[v6]:port", "[v6]" and a bare IPv6 address into host and port text.
std::pair<std::string_view, std::string_view> split_port(std::string_view entry) {
  if (entry.starts_with('[')) {
    const auto close = entry.find(']');
    if (close == std::string_view::npos) fail(entry, "the '[' has no matching ']'");
    const std::string_view rest = entry.substr(close + 1);
    if (!rest.empty() && !rest.starts_with(':')) fail(entry, "only \":PORT\" may follow ']'");
    if (rest.starts_with(':')) return {entry.substr(1, close - 1), rest.substr(1)};
    return {entry.substr(1, close - 1), {}};
  }
  const auto colon = entry.find(':');
  if (colon == std::string_view::npos) return {entry, {}};
  if (entry.find(':', colon + 1) != std::string_view::npos) return {entry, {}};  // bare IPv6
  if (colon + 1 == entry.size()) fail(entry, "the port after ':' is missing");
  return {entry.substr(0, colon), entry.substr(colon + 1)};
}

bool looks_like_address(std::string_view host) {
  if (host.find(':') != std::string_view::npos || host.find('/') != std::string_view::npos) {
    return true;
  }
  return parse_ipv4(host).has_value();
}

}  // namespace

AllowEntry parse_allow_entry(std::string_view text) {
  AllowEntry entry;
  entry.text = text;
  if (text.empty()) fail(text, "the entry is empty");
  const auto [host, port] = split_port(text);
  if (host.empty()) fail(text, "the host is missing");
  if (port.empty()) {
    entry.ports = {443, 80};
  } else {
    entry.ports = {parse_port(text, port)};
  }
  if (text.starts_with('[') && !looks_like_address(host)) {
    fail(text, "only an IPv6 address or range goes between '[' and ']'");
  }
  if (looks_like_address(host)) {
    entry.kind = EntryKind::address_range;
    entry.range = parse_range(text, host);
    return entry;
  }
  std::string_view name = host;
  if (name.starts_with("*.")) {
    entry.kind = EntryKind::names_below;
    name.remove_prefix(2);
  } else if (name.find('*') != std::string_view::npos) {
    fail(text, "'*' stands only at the start, as \"*.\" before a name");
  }
  entry.name = normalize_host_name(name);
  if (const auto problem = host_name_problem(entry.name)) fail(text, *problem);
  return entry;
}

void check_allow_entry(std::string_view text) {
  (void)parse_allow_entry(text);
}

}  // namespace jail::egress
