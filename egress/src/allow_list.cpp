// Both sides: matching names and addresses against the allow-list.
#include "egress/allow_list.hpp"

#include <algorithm>

#include "egress/host_name.hpp"

namespace jail::egress {

namespace {

bool has_port(const AllowEntry& entry, std::uint16_t port) {
  return std::find(entry.ports.begin(), entry.ports.end(), port) != entry.ports.end();
}

bool is_below(std::string_view name, std::string_view suffix) {
  return name.size() > suffix.size() + 1 && name.ends_with(suffix) &&
         name[name.size() - suffix.size() - 1] == '.';
}

}  // namespace

bool AllowList::allows_name(std::string_view name, std::uint16_t port) const {
  const std::string normalized = normalize_host_name(name);
  return std::any_of(entries_.begin(), entries_.end(), [&](const AllowEntry& entry) {
    if (!has_port(entry, port)) return false;
    if (entry.kind == EntryKind::name) return normalized == entry.name;
    if (entry.kind == EntryKind::names_below) return is_below(normalized, entry.name);
    return false;
  });
}

bool AllowList::names_address(const IpAddress& address, std::uint16_t port,
                              int min_prefix_bits) const {
  return std::any_of(entries_.begin(), entries_.end(), [&](const AllowEntry& entry) {
    return entry.kind == EntryKind::address_range && has_port(entry, port) &&
           entry.range.prefix_bits >= min_prefix_bits && entry.range.contains(address);
  });
}

}  // namespace jail::egress
