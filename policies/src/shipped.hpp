// The policy files built into the library (generated from policies/shipped/*.policy by CMake),
// so `load_policy("default")` needs no installed files.
#pragma once

#include <string_view>
#include <vector>

namespace jail::policy::detail {

struct ShippedFile {
  std::string_view name;  // without ".policy"
  std::string_view text;
};

[[nodiscard]] const std::vector<ShippedFile>& shipped_files();

}  // namespace jail::policy::detail
