// Named constants usable in conditions (AF_*, CLONE_*, TIOC*, …) and errno names.
// Values come from the system headers, so they are what the kernel expects.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace jail::policy {

struct NamedConstant {
  std::string_view name;
  std::uint64_t value;
};

[[nodiscard]] std::optional<std::uint64_t> constant_value(std::string_view name);
[[nodiscard]] const std::vector<NamedConstant>& all_constants();

[[nodiscard]] std::optional<int> errno_value(std::string_view name);
// "EPERM" for 1; empty when no name is known.
[[nodiscard]] std::string_view errno_name(int value);
[[nodiscard]] const std::vector<NamedConstant>& all_errno_names();

}  // namespace jail::policy
