// What changes between two policies, syscall by syscall: the review of a policy change.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "policy/policy.hpp"

namespace jail::policy {

struct SyscallChange {
  std::string syscall;
  int nr = -1;
  // The rules that decide it, in order ("allow if arg0 == 1", …, "otherwise errno EPERM").
  std::vector<std::string> before, after;
};

struct PolicyDiff {
  std::optional<std::string> default_before, default_after;  // set when the default changed
  std::vector<SyscallChange> syscalls;
  [[nodiscard]] bool empty() const { return !default_before && syscalls.empty(); }
};

// Compares decisions, not text: conditions are compared in their lowered form, so renaming a
// constant to its number or moving a rule into an include is no change.
[[nodiscard]] PolicyDiff diff(const Policy& before, const Policy& after);
[[nodiscard]] std::string diff_text(const PolicyDiff& d);

}  // namespace jail::policy
