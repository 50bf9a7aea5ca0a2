// Host side: hand-written parsing of the two proxy request-target forms (RFC 9112 3.2.2-3.2.3).
#include "egress/request_target.hpp"

#include <charconv>

#include "egress/host_name.hpp"

namespace jail::egress {

namespace {

std::optional<std::uint16_t> parse_port(std::string_view text) {
  unsigned value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || text.size() > 5 || error != std::errc() || end != text.data() + text.size() ||
      value == 0 || value > 65535) {
    return std::nullopt;
  }
  return static_cast<std::uint16_t>(value);
}

// "host" or "[v6]" without the port.
std::optional<Authority> parse_host(std::string_view host) {
  Authority authority;
  if (host.starts_with('[')) {
    if (host.size() < 2 || !host.ends_with(']')) return std::nullopt;
    authority.address = parse_ipv6(host.substr(1, host.size() - 2));
    if (!authority.address) return std::nullopt;
    authority.host = to_string(*authority.address);
    return authority;
  }
  if (auto v4 = parse_ipv4(host)) {
    authority.address = v4;
    authority.host = to_string(*v4);
    return authority;
  }
  authority.host = normalize_host_name(host);
  if (host_name_problem(authority.host)) return std::nullopt;
  return authority;
}

// Splits at the port's ':' (the last one, outside any brackets). Nothing after it: no port.
std::pair<std::string_view, std::optional<std::string_view>> split_port(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) return {text, std::nullopt};
  if (text.starts_with('[') && colon < text.rfind(']')) return {text, std::nullopt};
  return {text.substr(0, colon), text.substr(colon + 1)};
}

}  // namespace

std::string Authority::text() const {
  const std::string shown = address && address->family == AF_INET6 ? "[" + host + "]" : host;
  return shown + ":" + std::to_string(port);
}

std::optional<Authority> parse_authority_form(std::string_view target) {
  const auto [host, port_text] = split_port(target);
  if (!port_text) return std::nullopt;
  const auto port = parse_port(*port_text);
  if (!port) return std::nullopt;
  auto authority = parse_host(host);
  if (!authority) return std::nullopt;
  authority->port = *port;
  return authority;
}

std::optional<AbsoluteTarget> parse_absolute_http(std::string_view target) {
  constexpr std::string_view kScheme = "http://";
  if (target.size() < kScheme.size()) return std::nullopt;
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    const char c = target[i];
    const char lower = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    if (lower != kScheme[i]) return std::nullopt;
  }
  target.remove_prefix(kScheme.size());
  const auto authority_end = target.find_first_of("/?#");
  const std::string_view authority_text = target.substr(0, authority_end);
  // User info ("user@host") is refused: which host is meant is then a matter of taste.
  if (authority_text.find('@') != std::string_view::npos) return std::nullopt;
  const auto [host, port_text] = split_port(authority_text);
  std::uint16_t port = 80;
  if (port_text) {
    const auto parsed = parse_port(*port_text);
    if (!parsed) return std::nullopt;
    port = *parsed;
  }
  auto authority = parse_host(host);
  if (!authority) return std::nullopt;
  authority->port = port;

  std::string_view rest =
      authority_end == std::string_view::npos ? std::string_view{} : target.substr(authority_end);
  if (const auto fragment = rest.find('#'); fragment != std::string_view::npos) {
    rest = rest.substr(0, fragment);
  }
  AbsoluteTarget absolute{*authority, std::string(rest)};
  if (absolute.origin_target.empty() || absolute.origin_target.front() == '?') {
    absolute.origin_target.insert(0, "/");
  }
  return absolute;
}

}  // namespace jail::egress
