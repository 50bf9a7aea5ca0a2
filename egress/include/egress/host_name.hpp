// Both sides: DNS host names as the allow-list compares them.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace jail::egress {

// Lower case, one trailing dot dropped: "API.Example.com." and "api.example.com" are one name.
[[nodiscard]] std::string normalize_host_name(std::string_view name);

// Why `name` (already normalized) is no host name, or nothing when it is one: letters, digits,
// '-' and '.', labels of 1 to 63 characters not starting or ending with '-', 253 in all, and a
// last label that is not all digits (a resolver would read "10.1" as an IPv4 address).
[[nodiscard]] std::optional<std::string> host_name_problem(std::string_view name);

}  // namespace jail::egress
