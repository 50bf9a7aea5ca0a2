// Both sides: the whole allow-list, and what it lets through.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "egress/allow_entry.hpp"
#include "egress/ip_address.hpp"

namespace jail::egress {

class AllowList {
 public:
  explicit AllowList(std::vector<AllowEntry> entries) : entries_(std::move(entries)) {}

  // A host name (any case, trailing dot or not) on a port.
  [[nodiscard]] bool allows_name(std::string_view name, std::uint16_t port) const;
  // An address an entry names itself, or a range of an entry holds, on that port; with
  // `min_prefix_bits`, only by a range at least that narrow (the guard's test).
  [[nodiscard]] bool names_address(const IpAddress& address, std::uint16_t port,
                                   int min_prefix_bits = 0) const;

 private:
  std::vector<AllowEntry> entries_;
};

}  // namespace jail::egress
